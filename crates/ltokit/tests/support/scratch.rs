//! Temporary folders for tests, removed with everything in them when the test's thread
//! ends (libtest runs each test on a thread of its own). Shared by the test binaries of
//! several crates (included with `#[path]`); each needs `tempfile` as a dev-dependency.

use std::cell::RefCell;
use std::path::PathBuf;

thread_local! {
    static HELD: RefCell<Vec<tempfile::TempDir>> = const { RefCell::new(Vec::new()) };
}

/// A new, empty folder `<tmp>/<prefix>…`, kept until the calling thread ends.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("the tests need a writable temporary folder");
    let path = dir.path().to_path_buf();
    HELD.with(|held| held.borrow_mut().push(dir));
    path
}
