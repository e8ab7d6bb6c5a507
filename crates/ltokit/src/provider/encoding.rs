//! How a provider's manifest is stored.
//!
//! Format 2: one zstd frame holding a `u32` length and the JSON of everything but the
//! entries ([`Head`]), then the entries as a binary table — a `u32` count, then per
//! entry its key and digest (32 bytes each), block (`u32`), offset and size in the block
//! (`u64` each), plan and kernel names (`u16` length, `0xffff` for none, UTF-8). Opening
//! a provider is on the path of a process's first kernel; the table reads in a fraction
//! of the time JSON of a thousand entries takes.
//!
//! Format 1: the manifest as plain JSON, each entry its own zstd frame; read as format 2
//! with one block per entry.

use super::{ProviderEntry, ProviderManifest, SkippedPlan};
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::formats::blocks::{self, Block, Slot};
use crate::version::Version;

/// Largest manifest ltokit decompresses (64 MiB).
const MAX_MANIFEST_BYTES: usize = 64 << 20;
/// The length that stands for "no name".
const NO_NAME: u16 = u16::MAX;

/// Everything in a manifest but its entries.
#[derive(serde::Serialize, serde::Deserialize)]
struct Head {
    name: String,
    target: String,
    linker: Version,
    #[serde(default)]
    producer: Option<Version>,
    cache_format: u32,
    blocks: Vec<Block>,
    #[serde(default)]
    skipped: Vec<SkippedPlan>,
}

/// Encodes `m` as format 2 stores it.
pub(super) fn encode(m: &ProviderManifest) -> Result<Vec<u8>> {
    let head = Head {
        name: m.name.clone(),
        target: m.target.clone(),
        linker: m.linker,
        producer: m.producer,
        cache_format: m.cache_format,
        blocks: m.blocks.clone(),
        skipped: m.skipped.clone(),
    };
    let json = serde_json::to_vec(&head).map_err(|source| Error::Serialize {
        what: format!("the manifest of a provider for {}", m.target),
        source,
    })?;
    let mut out = Vec::with_capacity(json.len() + m.entries.len() * 120);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&(m.entries.len() as u32).to_le_bytes());
    for e in &m.entries {
        out.extend_from_slice(e.key.as_bytes());
        out.extend_from_slice(e.slot.digest.as_bytes());
        out.extend_from_slice(&e.slot.block.to_le_bytes());
        out.extend_from_slice(&e.slot.offset.to_le_bytes());
        out.extend_from_slice(&e.slot.raw_bytes.to_le_bytes());
        for name in [&e.plan, &e.kernel] {
            match name {
                Some(n) if n.len() < usize::from(NO_NAME) => {
                    out.extend_from_slice(&(n.len() as u16).to_le_bytes());
                    out.extend_from_slice(n.as_bytes());
                }
                Some(n) => {
                    return Err(Error::InvalidArgument(format!(
                        "a provider entry name of {} bytes (at most {})",
                        n.len(),
                        NO_NAME - 1
                    )))
                }
                None => out.extend_from_slice(&NO_NAME.to_le_bytes()),
            }
        }
    }
    blocks::compress("a provider manifest", &out)
}

/// Decodes the stored manifest of a file of `format`; the error says what is wrong.
pub(super) fn decode(format: u32, stored: &[u8]) -> std::result::Result<ProviderManifest, String> {
    if format == 1 {
        return serde_json::from_slice::<v1::Manifest>(stored)
            .map(v1::Manifest::upgrade)
            .map_err(|e| format!("manifest: {e}"));
    }
    let raw =
        blocks::decompress(stored, MAX_MANIFEST_BYTES).map_err(|why| format!("manifest: {why}"))?;
    let mut r = Reader { bytes: &raw, at: 0 };
    let head_len = r.u32()? as usize;
    let head: Head =
        serde_json::from_slice(r.take(head_len)?).map_err(|e| format!("manifest: {e}"))?;
    let count = r.u32()? as usize;
    // Every entry takes at least 92 bytes: a count beyond that is damage, not a size.
    if count > raw.len() / 92 {
        return Err(format!("manifest: {count} entries cannot fit in it"));
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let key = Digest(r.array()?);
        let digest = Digest(r.array()?);
        let slot = Slot {
            block: r.u32()?,
            offset: r.u64()?,
            raw_bytes: r.u64()?,
            digest,
        };
        let plan = r.name()?;
        let kernel = r.name()?;
        entries.push(ProviderEntry {
            key,
            plan,
            kernel,
            slot,
        });
    }
    if r.at != raw.len() {
        return Err("manifest: bytes after the entry table".into());
    }
    Ok(ProviderManifest {
        name: head.name,
        target: head.target,
        linker: head.linker,
        producer: head.producer,
        cache_format: head.cache_format,
        blocks: head.blocks,
        entries,
        skipped: head.skipped,
    })
}

/// Bounds-checked little-endian reads.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or("manifest: the entry table is cut short")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> std::result::Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> std::result::Result<u64, String> {
        self.array().map(u64::from_le_bytes)
    }

    fn name(&mut self) -> std::result::Result<Option<String>, String> {
        let len = u16::from_le_bytes(self.array()?);
        if len == NO_NAME {
            return Ok(None);
        }
        let bytes = self.take(usize::from(len))?;
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|_| "manifest: a name is not UTF-8".to_string())
    }
}

/// The manifest of format 1: plain JSON, one zstd frame per entry.
mod v1 {
    use super::*;
    use crate::digest::Digest;
    use crate::version::Version;

    #[derive(serde::Deserialize)]
    pub struct Entry {
        key: Digest,
        #[serde(default)]
        plan: Option<String>,
        #[serde(default)]
        kernel: Option<String>,
        digest: Digest,
        offset: u64,
        stored_bytes: u64,
        raw_bytes: u64,
    }

    #[derive(serde::Deserialize)]
    pub struct Manifest {
        name: String,
        target: String,
        linker: Version,
        #[serde(default)]
        producer: Option<Version>,
        cache_format: u32,
        entries: Vec<Entry>,
        #[serde(default)]
        skipped: Vec<SkippedPlan>,
    }

    impl Manifest {
        /// The same provider in format 2's terms: each frame is a block of one entry.
        pub fn upgrade(self) -> ProviderManifest {
            let (blocks, entries) = self
                .entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| {
                    let block = Block {
                        offset: e.offset,
                        stored_bytes: e.stored_bytes,
                        raw_bytes: e.raw_bytes,
                    };
                    let slot = Slot {
                        block: i as u32,
                        offset: 0,
                        raw_bytes: e.raw_bytes,
                        digest: e.digest,
                    };
                    (
                        block,
                        ProviderEntry {
                            key: e.key,
                            plan: e.plan,
                            kernel: e.kernel,
                            slot,
                        },
                    )
                })
                .unzip();
            ProviderManifest {
                name: self.name,
                target: self.target,
                linker: self.linker,
                producer: self.producer,
                cache_format: self.cache_format,
                blocks,
                entries,
                skipped: self.skipped,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> ProviderManifest {
        let entry = |i: u8, plan: Option<&str>| ProviderEntry {
            key: Digest([i; 32]),
            plan: plan.map(String::from),
            kernel: plan.map(|p| format!("{p}_kernel")),
            slot: Slot {
                block: u32::from(i % 2),
                offset: u64::from(i) * 100,
                raw_bytes: 100,
                digest: Digest([i + 100; 32]),
            },
        };
        ProviderManifest {
            name: "t".into(),
            target: "sm_90".into(),
            linker: Version::new(13, 0),
            producer: None,
            cache_format: 2,
            blocks: vec![
                Block {
                    offset: 0,
                    stored_bytes: 10,
                    raw_bytes: 1000,
                };
                2
            ],
            entries: vec![
                entry(1, Some("scan_c1")),
                entry(2, None),
                entry(3, Some("é")),
            ],
            skipped: vec![SkippedPlan {
                plan: "x".into(),
                why: "needs sm_100".into(),
            }],
        }
    }

    #[test]
    fn round_trip() {
        let m = manifest();
        assert_eq!(decode(2, &encode(&m).unwrap()).unwrap(), m);
    }

    #[test]
    fn damage_is_named() {
        let raw = blocks::decompress(&encode(&manifest()).unwrap(), 1 << 20).unwrap();
        let cut = blocks::compress("t", &raw[..raw.len() - 3]).unwrap();
        assert!(decode(2, &cut).unwrap_err().contains("cut short"));
        let mut longer = raw.clone();
        longer.push(0);
        let longer = blocks::compress("t", &longer).unwrap();
        assert!(decode(2, &longer)
            .unwrap_err()
            .contains("after the entry table"));
        let mut huge = raw.clone();
        let head_len = u32::from_le_bytes(raw[..4].try_into().unwrap()) as usize;
        huge[4 + head_len..8 + head_len].copy_from_slice(&u32::MAX.to_le_bytes());
        let huge = blocks::compress("t", &huge).unwrap();
        assert!(decode(2, &huge).unwrap_err().contains("cannot fit"));
        assert!(decode(1, b"{").unwrap_err().starts_with("manifest:"));
    }
}
