//! Building fatbin containers.
//!
//! The writer emits the header layouts nvFatbin emits: 64 bytes for cubins, 80 bytes for
//! PTX and LTO-IR, whose headers must carry an options descriptor (here an empty options
//! string) — nvJitLink reads it unconditionally and crashes on a fatbin without one. PTX and cubins can be ZSTD-compressed;
//! LTO-IR is always stored raw, because nvcc's compressed LTO-IR uses a private scheme
//! that only NVIDIA's tools read.

use super::{
    Codec, EntryKind, CONTAINER_HEADER_SIZE, FLAG_64BIT, FLAG_ARCH_SPECIFIC, FLAG_FAMILY,
    FLAG_HOST_LINUX, FLAG_ZSTD, MAGIC, MIN_ENTRY_HEADER_SIZE,
};
use crate::arch::{Target, Variant};
use crate::error::{Error, Result};
use crate::formats::ltoir;

/// Entry header size for kinds that carry an options descriptor (PTX, LTO-IR).
const OPTIONS_HEADER_SIZE: usize = MIN_ENTRY_HEADER_SIZE + 16;

/// ZSTD level used for compressed entries (a good ratio at negligible cost for kernels).
const ZSTD_LEVEL: i32 = 19;

struct PendingEntry {
    kind: EntryKind,
    target: Target,
    version: (u16, u16),
    stored: Vec<u8>,
    raw_size: usize,
    codec: Codec,
}

/// Accumulates entries and writes one fatbin container.
#[derive(Default)]
pub struct FatbinWriter {
    entries: Vec<PendingEntry>,
}

impl FatbinWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one entry. `target`'s number and `a`/`f` suffix are recorded; its kind is
    /// taken from `kind`. `codec` may be [`Codec::None`] or [`Codec::Zstd`] (not for LTO-IR).
    pub fn add(
        &mut self,
        kind: EntryKind,
        target: Target,
        payload: &[u8],
        codec: Codec,
    ) -> Result<&mut Self> {
        if payload.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "empty {kind} payload for {target}"
            )));
        }
        let version = match kind {
            EntryKind::Ptx => ptx_isa_version(payload).unwrap_or((9, 0)),
            EntryKind::Cubin => (1, 8),
            EntryKind::LtoIr => ltoir::header_version(payload).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "payload for {target} is not LTO-IR (its magic is missing)"
                ))
            })?,
        };
        let stored = match codec {
            Codec::None => payload.to_vec(),
            Codec::Zstd if kind != EntryKind::LtoIr => zstd::bulk::compress(payload, ZSTD_LEVEL)
                .map_err(|source| Error::Compress {
                    what: format!("a fatbin entry of {} bytes", payload.len()),
                    source,
                })?,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{codec} compression of {kind} entries is not supported; use none (LTO-IR) or zstd (PTX, cubin)"
                )))
            }
        };
        self.entries.push(PendingEntry {
            kind,
            target: target.with_kind(kind.code_kind()),
            version,
            stored,
            raw_size: payload.len(),
            codec,
        });
        Ok(self)
    }

    /// Number of entries added so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the container.
    pub fn finish(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for e in &self.entries {
            let padded = e.stored.len().next_multiple_of(8);
            let mut flags = FLAG_64BIT | FLAG_HOST_LINUX;
            flags |= match e.target.variant {
                Variant::Base => 0,
                Variant::Specific => FLAG_ARCH_SPECIFIC,
                Variant::Family => FLAG_FAMILY,
            };
            let compressed = e.codec != Codec::None;
            if compressed {
                flags |= FLAG_ZSTD;
            }
            let has_options = e.kind != EntryKind::Cubin;
            let header_size = if has_options {
                OPTIONS_HEADER_SIZE
            } else {
                MIN_ENTRY_HEADER_SIZE
            };
            body.extend_from_slice(&e.kind.code().to_le_bytes());
            body.extend_from_slice(&0x0101u16.to_le_bytes());
            body.extend_from_slice(&(header_size as u32).to_le_bytes());
            body.extend_from_slice(&(padded as u64).to_le_bytes());
            body.extend_from_slice(
                &(if compressed { e.stored.len() as u32 } else { 0 }).to_le_bytes(),
            );
            body.extend_from_slice(
                &(if has_options {
                    MIN_ENTRY_HEADER_SIZE as u32
                } else {
                    0
                })
                .to_le_bytes(),
            );
            body.extend_from_slice(&e.version.1.to_le_bytes()); // minor, then major
            body.extend_from_slice(&e.version.0.to_le_bytes());
            body.extend_from_slice(&e.target.number().to_le_bytes());
            body.extend_from_slice(&0u32.to_le_bytes()); // identifier offset
            body.extend_from_slice(&0u32.to_le_bytes()); // identifier length
            body.extend_from_slice(&flags.to_le_bytes());
            body.extend_from_slice(&0u64.to_le_bytes()); // reserved
            body.extend_from_slice(&(if compressed { e.raw_size as u64 } else { 0 }).to_le_bytes());
            if has_options {
                // Options descriptor {offset, size} pointing just past itself, empty string.
                body.extend_from_slice(&((MIN_ENTRY_HEADER_SIZE + 8) as u32).to_le_bytes());
                body.extend_from_slice(&0u32.to_le_bytes());
                body.extend_from_slice(&0u64.to_le_bytes());
            }
            body.extend_from_slice(&e.stored);
            body.resize(body.len() + (padded - e.stored.len()), 0);
        }
        let mut out = Vec::with_capacity(CONTAINER_HEADER_SIZE + body.len());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&(CONTAINER_HEADER_SIZE as u16).to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }
}

/// The `.version X.Y` directive of PTX text.
fn ptx_isa_version(ptx: &[u8]) -> Option<(u16, u16)> {
    let text = std::str::from_utf8(ptx.get(..ptx.len().min(4096))?).ok()?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".version"))?;
    let (major, minor) = line.trim_start_matches(".version").trim().split_once('.')?;
    Some((major.parse().ok()?, minor.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_version_is_read_from_the_directive() {
        assert_eq!(
            ptx_isa_version(b"//\n.version 9.0\n.target sm_90\n"),
            Some((9, 0))
        );
        assert_eq!(ptx_isa_version(b".target sm_90\n"), None);
    }
}
