//! Toolkit versions (`13.0`), shared by the format readers and the FFI layer.

/// A library version `major.minor`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Version {
    /// Major version (13 for CUDA 13.x).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl Version {
    /// Makes a version.
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}
