//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The fixture folder: `LTOKIT_TEST_FIXTURES` when set (test binaries copied to the GPU
/// machine), else the repository's tests/fixtures.
pub fn fixtures() -> PathBuf {
    std::env::var_os("LTOKIT_TEST_FIXTURES").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures")),
        PathBuf::from,
    )
}

/// Reads one fixture.
pub fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}
