//! Test support: a private Redis server (Debian's `redis-server`) on a free loopback
//! port, with its data in the test's own directory, stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`.
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server with its files under `dir`. `None` (after printing `SKIPPED`)
    /// when `redis-server` is not installed — unless `LTOKIT_TEST_REQUIRE_REDIS=1`
    /// (set by `scripts/test.sh`), which makes that a failure.
    pub fn start(dir: &Path) -> Option<RedisServer> {
        let found = Command::new("redis-server")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            let test = std::thread::current().name().unwrap_or("test").to_string();
            assert!(
                std::env::var_os("LTOKIT_TEST_REQUIRE_REDIS").is_none_or(|v| v != "1"),
                "{test}: LTOKIT_TEST_REQUIRE_REDIS=1 and redis-server is not installed (apt-get install redis-server)"
            );
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: redis-server is not installed"
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let mut server = RedisServer {
            port,
            dir: dir.to_path_buf(),
            child: None,
        };
        server.restart();
        Some(server)
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL: as a crash would).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port (empty: it keeps nothing on disk), and
    /// waits until it answers.
    pub fn restart(&mut self) {
        self.kill();
        std::fs::create_dir_all(&self.dir).expect("the server's directory");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not come up");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
