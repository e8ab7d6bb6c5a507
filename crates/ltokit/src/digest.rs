//! Content digests (BLAKE3, 32 bytes): fragment identities, plan keys, file checksums.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A 32-byte BLAKE3 digest, printed as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(*blake3::hash(bytes).as_bytes())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Hex form: 64 lowercase digits.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// The first `n` hex digits (for short displays).
    pub fn short(&self, n: usize) -> String {
        let mut s = self.to_hex();
        s.truncate(n.min(64));
        s
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&blake3::Hash::from_bytes(self.0).to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.short(16))
    }
}

impl FromStr for Digest {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        blake3::Hash::from_hex(s)
            .map(|h| Digest(*h.as_bytes()))
            .map_err(|e| Error::InvalidArgument(format!("{s:?} is not a 64-digit hex digest: {e}")))
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Incremental hashing of length-prefixed fields, so that no two different field lists
/// hash alike (`["ab", "c"]` vs `["a", "bc"]`).
pub struct FieldHasher(blake3::Hasher);

impl FieldHasher {
    /// Starts a hash in a domain (a constant naming what is hashed).
    pub fn new(domain: &str) -> Self {
        let mut h = FieldHasher(blake3::Hasher::new());
        h.field(domain.as_bytes());
        h
    }

    /// Adds one field.
    pub fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// The digest of everything added.
    pub fn finish(&self) -> Digest {
        Digest(*self.0.finalize().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_rejects() {
        let d = Digest::of(b"ltokit");
        assert_eq!(d.to_hex().parse::<Digest>().unwrap(), d);
        assert!("xyz".parse::<Digest>().is_err());
        assert!("g".repeat(64).parse::<Digest>().is_err());
    }

    #[test]
    fn fields_are_length_prefixed() {
        let a = FieldHasher::new("t").field(b"ab").field(b"c").finish();
        let b = FieldHasher::new("t").field(b"a").field(b"bc").finish();
        assert_ne!(a, b);
    }
}
