//! Helpers shared by the CLI tests.
//!
//! Every `ltokit` these tests start runs isolated: `HOME` and `XDG_{CACHE,DATA,CONFIG}_HOME`
//! point into a folder of the test's own (named after the test), and no `LTOKIT_*`
//! setting is inherited but `LTOKIT_CUDA_LIB_DIR`, so no test reads or writes the user's
//! cache or providers. Scratch folders live in the test's own temporary folder, removed when
//! the test ends.

#![allow(dead_code)] // each test file uses a different subset

use std::path::PathBuf;
use std::process::{Command, Output};

#[path = "../../../ltokit/tests/support/scratch.rs"]
mod scratch;
use scratch::scratch_dir;

/// The variables a test must not inherit (it sets what it needs explicitly).
const CLEARED: &[&str] = &[
    "LTOKIT_CACHE_DIR",
    "LTOKIT_CACHE",
    "LTOKIT_CACHE_MAX_BYTES",
    "LTOKIT_JIT",
    "LTOKIT_PROVIDER_PATH",
    "LTOKIT_PROVIDER_POLICY",
    "LTOKIT_LOG",
    "LTOKIT_REMOTE",
    "LTOKIT_REMOTE_KEY_FILE",
    "LTOKIT_REMOTE_MODE",
    "LTOKIT_REMOTE_TIMEOUT_MS",
    "LTOKIT_REMOTE_LOCK_TTL_MS",
    "LTOKIT_REMOTE_BACKOFF_MS",
];

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// This test's own folder (`<tmp>/ltokit-test-<test name>…`), created on first use and
/// removed with everything in it when the test ends.
fn test_root() -> PathBuf {
    thread_local! {
        static ROOT: PathBuf = {
            let name: String = std::thread::current()
                .name()
                .unwrap_or("main")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            scratch_dir(&format!("ltokit-test-{name}-"))
        };
    }
    ROOT.with(PathBuf::clone)
}

/// A fresh, empty scratch folder `tag` inside this test's folder.
pub fn scratch(tag: &str) -> PathBuf {
    let d = test_root().join(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// [`scratch`] for a test that needs the CUDA compiler libraries, or `None` (the test then
/// returns) when they cannot be loaded and `ltokit_demo::skip_without_toolkit` lets it skip.
pub fn toolkit_scratch(tag: &str) -> Option<PathBuf> {
    (!ltokit_demo::skip_without_toolkit()).then(|| scratch(tag))
}

/// An isolated `ltokit` command (see the module docs) with `args` and `env`.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let home = test_root().join("home");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ltokit"));
    cmd.args(args)
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"));
    for var in CLEARED {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs an isolated `ltokit` to completion.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("ltokit runs")
}

/// Standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output and error, together.
pub fn text(o: &Output) -> String {
    stdout(o) + &stderr(o)
}

/// Runs `ltokit bench cache` for one plan of a bundle, with `extra` arguments.
pub fn bench_cache(
    bundle: &str,
    plan: &str,
    arch: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut args = vec![
        "bench", "cache", "--bundle", bundle, "--plan", plan, "--arch", arch,
    ];
    args.extend_from_slice(extra);
    run(&args, env)
}

/// Copies the demo kernel's three sources into `dir` beside a bundle spec named `name`
/// with their three fragments (entry `ltk_demo`, `transform`, `combine`) and the plans
/// `plans` (a JSON array's items); returns the spec's path.
pub fn demo_spec(dir: &std::path::Path, name: &str, plans: &str) -> PathBuf {
    let src = repo().join("crates/ltokit-demo/kernels/demo");
    for f in ["entry.cu", "transform.cu", "combine.cu"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let spec = format!(
        r#"{{
      "name": "{name}",
      "fragments": [
        {{ "name": "entry", "role": "entry", "source": "entry.cu", "exports": ["ltk_demo"],
          "requires": ["ltk_transform", "ltk_combine"] }},
        {{ "name": "transform", "source": "transform.cu", "exports": ["ltk_transform"] }},
        {{ "name": "combine", "source": "combine.cu", "exports": ["ltk_combine"] }}
      ],
      "plans": [{plans}]
    }}"#
    );
    let path = dir.join("spec.json");
    std::fs::write(&path, spec).unwrap();
    path
}
