//! Parsing fatbin containers. Every offset and size read from the input is checked
//! before use; malformed input is an [`Error::Fatbin`] naming the byte offset.

use std::borrow::Cow;

use super::{
    Codec, EntryKind, CONTAINER_HEADER_SIZE, FLAG_ARCH_SPECIFIC, FLAG_COMPRESSED_IR, FLAG_FAMILY,
    FLAG_LZ4, FLAG_ZSTD, MAGIC, MIN_ENTRY_HEADER_SIZE,
};
use crate::arch::{Target, Variant};
use crate::error::{Error, Result};

/// Largest decompressed size ltokit will allocate for one entry (1 GiB).
pub const MAX_RAW_ENTRY_BYTES: u64 = 1 << 30;
/// Largest believable compression ratio; a header claiming more is rejected before
/// anything is allocated (protects against decompression bombs in hostile input).
const MAX_COMPRESSION_RATIO: u64 = 4096;

/// One entry of a fatbin, borrowing its payload from the input.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// PTX, cubin or LTO-IR.
    pub kind: EntryKind,
    /// Its target: `sm_XY[a|f]` for cubins, `compute_XY[a|f]` for PTX, `lto_XY[a|f]` for LTO-IR.
    pub target: Target,
    /// How the payload is stored.
    pub codec: Codec,
    /// The raw flag word.
    pub flags: u64,
    /// The format version recorded for the payload (PTX ISA, cubin ABI, LTO-IR version).
    pub payload_version: (u16, u16),
    /// The identifier, if one is stored.
    pub identifier: Option<String>,
    /// The compile options string, if one is stored (e.g. `-ftz=0 -prec_div=1`).
    pub options: Option<String>,
    /// The stored (possibly compressed) payload bytes.
    pub payload: &'a [u8],
    /// The size of the payload once decompressed.
    pub raw_size: u64,
    /// Byte offset of the entry header within the parsed input.
    pub offset: usize,
}

impl Entry<'_> {
    /// The architecture in listing form, `sm_XY[a|f]`, whatever the kind.
    pub fn arch_name(&self) -> String {
        self.target.link_arch()
    }

    /// The payload, decompressed. LTO-IR compressed by nvcc uses a private scheme that
    /// is not standard ZSTD and is refused here: hand the whole fatbin to nvJitLink.
    pub fn decompressed(&self) -> Result<Cow<'_, [u8]>> {
        if self.codec == Codec::None {
            return Ok(Cow::Borrowed(self.payload));
        }
        if self.kind == EntryKind::LtoIr || self.flags & FLAG_COMPRESSED_IR != 0 {
            return Err(Error::Decompress {
                what: format!("{} {} entry at byte {}: nvcc compresses LTO-IR with a private scheme; pass the whole fatbin to nvJitLink instead", self.kind, self.arch_name(), self.offset),
            });
        }
        let raw = usize::try_from(self.raw_size)
            .map_err(|_| self.decompress_error("size does not fit in memory"))?;
        let out = if self.codec == Codec::Zstd {
            zstd::bulk::decompress(self.payload, raw)
                .map_err(|e| self.decompress_error(&e.to_string()))?
        } else {
            lz4_flex::block::decompress(self.payload, raw)
                .map_err(|e| self.decompress_error(&e.to_string()))?
        };
        if out.len() != raw {
            return Err(
                self.decompress_error(&format!("got {} bytes, header says {raw}", out.len()))
            );
        }
        Ok(Cow::Owned(out))
    }

    fn decompress_error(&self, why: &str) -> Error {
        Error::Decompress {
            what: format!(
                "{} {} {} entry at byte {}: {why}",
                self.codec,
                self.kind,
                self.arch_name(),
                self.offset
            ),
        }
    }
}

/// Bounds-checked little-endian reads.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(&self, at: usize, len: usize, what: &str) -> Result<&'a [u8]> {
        at.checked_add(len)
            .and_then(|end| self.0.get(at..end))
            .ok_or_else(|| {
                Error::fatbin(
                    at,
                    format!(
                        "{what} ({len} bytes) runs past the end of the input ({} bytes)",
                        self.0.len()
                    ),
                )
            })
    }
    fn u16(&self, at: usize) -> Result<u16> {
        let b = self.slice(at, 2, "u16 field")?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize) -> Result<u32> {
        let b = self.slice(at, 4, "u32 field")?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&self, at: usize) -> Result<u64> {
        let b = self.slice(at, 8, "u64 field")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

fn to_usize(v: u64, at: usize, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::fatbin(at, format!("{what} {v} is too large")))
}

/// True when `data` starts with a fatbin container magic.
pub fn is_fatbin(data: &[u8]) -> bool {
    data.len() >= 4 && u32::from_le_bytes([data[0], data[1], data[2], data[3]]) == MAGIC
}

/// Parses one or more concatenated fatbin containers (zero padding between them is
/// allowed, as in `.nv_fatbin` sections) and returns every entry in order.
pub fn parse(data: &[u8]) -> Result<Vec<Entry<'_>>> {
    let bytes = Bytes(data);
    let mut entries = Vec::new();
    let mut at = 0usize;
    if !is_fatbin(data) {
        return Err(Error::fatbin(
            0,
            format!("not a fatbin: the magic 0x{MAGIC:08X} is missing"),
        ));
    }
    loop {
        while at < data.len() && data[at] == 0 {
            at += 1;
        }
        if at >= data.len() {
            return Ok(entries);
        }
        if bytes.u32(at)? != MAGIC {
            return Err(Error::fatbin(at, "unexpected bytes between fatbin containers (expected the magic 0xBA55ED50 or zero padding)"));
        }
        at = parse_container(&bytes, at, &mut entries)?;
    }
}

/// Parses the container at `start`; returns the offset just past it.
fn parse_container<'a>(
    bytes: &Bytes<'a>,
    start: usize,
    entries: &mut Vec<Entry<'a>>,
) -> Result<usize> {
    let version = bytes.u16(start + 4)?;
    if version != 1 {
        return Err(Error::fatbin(
            start + 4,
            format!("container version {version} is not supported (only 1 is known)"),
        ));
    }
    let header_size = bytes.u16(start + 6)? as usize;
    if header_size < CONTAINER_HEADER_SIZE {
        return Err(Error::fatbin(
            start + 6,
            format!("container header size {header_size} is smaller than {CONTAINER_HEADER_SIZE}"),
        ));
    }
    let body_size = to_usize(bytes.u64(start + 8)?, start + 8, "container size")?;
    let body_start = start
        .checked_add(header_size)
        .ok_or_else(|| Error::fatbin(start, "container header size overflows"))?;
    let body = bytes.slice(body_start, body_size, "container body")?;
    let body_end = body_start + body.len();
    let mut at = body_start;
    while at < body_end {
        let (entry, next) = parse_entry(bytes, at, body_end)?;
        entries.push(entry);
        at = next;
    }
    Ok(body_end)
}

fn parse_entry<'a>(bytes: &Bytes<'a>, at: usize, body_end: usize) -> Result<(Entry<'a>, usize)> {
    let kind_code = bytes.u16(at)?;
    let kind = EntryKind::from_code(kind_code).ok_or_else(|| {
        Error::fatbin(
            at,
            format!("unknown entry kind {kind_code} (known: 1 = PTX, 2 = cubin, 8 = LTO-IR)"),
        )
    })?;
    let header_size = bytes.u32(at + 4)? as usize;
    if header_size < MIN_ENTRY_HEADER_SIZE {
        return Err(Error::fatbin(
            at + 4,
            format!("entry header size {header_size} is smaller than {MIN_ENTRY_HEADER_SIZE}"),
        ));
    }
    let padded_size = to_usize(bytes.u64(at + 8)?, at + 8, "entry payload size")?;
    let header = bytes.slice(at, header_size, "entry header")?;
    let payload_start = at + header_size;
    let payload_end = payload_start
        .checked_add(padded_size)
        .filter(|&end| end <= body_end)
        .ok_or_else(|| {
            Error::fatbin(
                at + 8,
                format!("entry payload of {padded_size} bytes runs past the end of its container"),
            )
        })?;
    let compressed_size = bytes.u32(at + 0x10)? as usize;
    let options_offset = bytes.u32(at + 0x14)? as usize;
    let payload_version = (bytes.u16(at + 0x1A)?, bytes.u16(at + 0x18)?);
    let arch = bytes.u32(at + 0x1C)?;
    let id_offset = bytes.u32(at + 0x20)? as usize;
    let id_len = bytes.u32(at + 0x24)? as usize;
    let flags = bytes.u64(at + 0x28)?;
    let uncompressed_size = bytes.u64(at + 0x38)?;

    let codec = match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
        (false, false) => Codec::None,
        (true, false) => Codec::Lz4,
        (false, true) => Codec::Zstd,
        (true, true) => {
            return Err(Error::fatbin(
                at + 0x28,
                "entry flags claim both LZ4 and ZSTD compression",
            ))
        }
    };
    let variant = match (flags & FLAG_ARCH_SPECIFIC != 0, flags & FLAG_FAMILY != 0) {
        (false, false) => Variant::Base,
        (true, false) => Variant::Specific,
        (false, true) => Variant::Family,
        (true, true) => {
            return Err(Error::fatbin(
                at + 0x28,
                "entry flags claim both the arch-specific (a) and family (f) suffix",
            ))
        }
    };
    let target = Target::from_number(kind.code_kind(), arch, variant).map_err(|_| {
        Error::fatbin(
            at + 0x1C,
            format!("entry architecture {arch} is out of range"),
        )
    })?;

    let (payload, raw_size) = if codec == Codec::None {
        (&bytes.0[payload_start..payload_end], padded_size as u64)
    } else {
        let stored = if compressed_size == 0 {
            padded_size
        } else {
            compressed_size
        };
        if stored > padded_size {
            return Err(Error::fatbin(
                at + 0x10,
                format!("compressed size {stored} exceeds the payload size {padded_size}"),
            ));
        }
        let limit = (stored as u64)
            .saturating_mul(MAX_COMPRESSION_RATIO)
            .min(MAX_RAW_ENTRY_BYTES);
        if uncompressed_size == 0 || uncompressed_size > limit {
            return Err(Error::fatbin(at + 0x38, format!("uncompressed size {uncompressed_size} is implausible for {stored} compressed bytes")));
        }
        (
            &bytes.0[payload_start..payload_start + stored],
            uncompressed_size,
        )
    };

    let identifier = header_string(header, id_offset, id_len);
    let options = if options_offset != 0 {
        let descriptor = Bytes(header);
        match (
            descriptor.u32(options_offset),
            descriptor.u32(options_offset + 4),
        ) {
            (Ok(off), Ok(len)) => header_string(header, off as usize, len as usize),
            _ => None,
        }
    } else {
        None
    };

    let entry = Entry {
        kind,
        target,
        codec,
        flags,
        payload_version,
        identifier,
        options,
        payload,
        raw_size,
        offset: at,
    };
    Ok((entry, payload_end))
}

/// A string stored inside an entry header; absent when empty or out of bounds.
fn header_string(header: &[u8], offset: usize, len: usize) -> Option<String> {
    if offset == 0 || len == 0 {
        return None;
    }
    let raw = header.get(offset..offset.checked_add(len)?)?;
    let text = String::from_utf8_lossy(raw);
    let text = text.trim_end_matches('\0').trim();
    (!text.is_empty()).then(|| text.to_string())
}
