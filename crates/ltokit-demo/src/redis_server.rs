//! Test support: a private Redis server (Debian's `redis-server`) on a free loopback
//! port, with its data in the test's own directory, stopped when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Ports handed out so far by this process ([`free_port`]).
static PORTS_TAKEN: AtomicU32 = AtomicU32::new(0);

/// A loopback port no other server of this process has had and nothing listens on now.
/// Asking the OS for port 0 and releasing it is not enough: two tests starting servers at
/// once could be handed the same port, one server then fails to bind, its test talks to
/// the other's — and a test that kills its server (the dead-Redis one) takes the other's
/// away (seen once in CI: "Connection refused" in a test whose server had never run).
/// Ports are taken in order from a base that depends on the process id, so that processes
/// started together do not walk the same ones.
fn free_port() -> u16 {
    let base = 20_000 + (std::process::id() % 1_000) * 30;
    loop {
        let n = PORTS_TAKEN.fetch_add(1, Ordering::Relaxed);
        let port = (base + n % 30_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

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
        // A port another process took between the probe and the server's bind makes the
        // server exit: then the next port.
        for _ in 0..20 {
            let mut server = RedisServer {
                port: free_port(),
                dir: dir.to_path_buf(),
                child: None,
            };
            if server.try_restart() {
                return Some(server);
            }
        }
        panic!("redis-server did not start on any of 20 loopback ports");
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
        assert!(
            self.try_restart(),
            "redis-server exited at once on port {} (taken?)",
            self.port
        );
    }

    /// [`RedisServer::restart`], false where the server exits instead of answering (its
    /// port taken).
    fn try_restart(&mut self) -> bool {
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
        loop {
            // Ours must be the one answering: a server that could not bind has exited.
            if !self.running() {
                self.child = None;
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return self.running();
            }
            assert!(Instant::now() < deadline, "redis-server did not come up");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether this server's process is still running.
    fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
