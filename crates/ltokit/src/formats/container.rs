//! The envelope shared by ltokit's manifest files (bundles, providers): a 64-byte header
//! — 8-byte magic, `u32` format version, `u32` reserved, `u64` manifest length, 32-byte
//! BLAKE3 of the manifest, `u64` payload length — then the JSON manifest, then the payload.

use crate::digest::Digest;

/// Size of the header.
pub const HEADER_SIZE: usize = 64;

/// Where the parts of a checked file lie.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Manifest bytes: `HEADER_SIZE..payload_start`.
    pub manifest_len: usize,
    /// First payload byte.
    pub payload_start: usize,
    /// Payload length.
    pub payload_len: usize,
}

impl Layout {
    /// The manifest bytes of `data`.
    pub fn manifest<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        &data[HEADER_SIZE..HEADER_SIZE + self.manifest_len]
    }
}

/// Writes a file: header, manifest, payload.
pub fn write(magic: &[u8; 8], version: u32, manifest: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_SIZE + manifest.len() + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(manifest.len() as u64).to_le_bytes());
    out.extend_from_slice(Digest::of(manifest).as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(manifest);
    out.extend_from_slice(payload);
    out
}

/// Checks magic, version, sizes and the manifest digest of a file that should be a
/// `what` (e.g. "bundle"); the error says what is wrong, for the caller to wrap.
pub fn open(data: &[u8], magic: &[u8; 8], version: u32, what: &str) -> Result<Layout, String> {
    if data.len() < HEADER_SIZE || &data[..8] != magic {
        let name = String::from_utf8_lossy(magic)
            .trim_end_matches('\0')
            .to_string();
        return Err(format!(
            "the magic {name} is missing (not a {what}, or truncated)"
        ));
    }
    let u64_at = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or([0; 8]));
    let found = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    if found != version {
        return Err(format!(
            "format version {found}, this ltokit reads version {version}"
        ));
    }
    let manifest_len =
        usize::try_from(u64_at(16)).map_err(|_| "manifest length overflows".to_string())?;
    let payload_len =
        usize::try_from(u64_at(56)).map_err(|_| "payload length overflows".to_string())?;
    let expected = HEADER_SIZE
        .checked_add(manifest_len)
        .and_then(|n| n.checked_add(payload_len));
    if expected != Some(data.len()) {
        return Err(format!(
            "the header announces {} bytes, the file has {} (truncated or padded)",
            expected.map_or("too many".into(), |n| n.to_string()),
            data.len()
        ));
    }
    let layout = Layout {
        manifest_len,
        payload_start: HEADER_SIZE + manifest_len,
        payload_len,
    };
    if Digest::of(layout.manifest(data)).as_bytes()[..] != data[24..56] {
        return Err("the manifest digest does not match (the file is corrupt)".into());
    }
    Ok(layout)
}

/// Where one zstd frame of a payload lies, and what it decodes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Offset in the payload.
    pub offset: u64,
    /// Compressed size.
    pub stored_bytes: u64,
    /// Decompressed size.
    pub raw_bytes: u64,
    /// BLAKE3 of the decompressed bytes.
    pub digest: Digest,
}

/// Compresses `raw` (zstd level 19) onto the end of `payload`.
pub fn append_frame(payload: &mut Vec<u8>, raw: &[u8]) -> crate::Result<Frame> {
    let compressed = zstd::bulk::compress(raw, 19).map_err(|source| crate::Error::Compress {
        what: format!("a payload of {} bytes", raw.len()),
        source,
    })?;
    let frame = Frame {
        offset: payload.len() as u64,
        stored_bytes: compressed.len() as u64,
        raw_bytes: raw.len() as u64,
        digest: Digest::of(raw),
    };
    payload.extend_from_slice(&compressed);
    Ok(frame)
}

/// Decompresses `frame` of the payload starting at `payload_start` in `data` and checks
/// its size and digest; the error says what is wrong, for the caller to wrap. The frame
/// must lie inside `data` (the readers check every frame when they open a file).
pub fn read_frame(data: &[u8], payload_start: usize, frame: &Frame) -> Result<Vec<u8>, String> {
    let start = payload_start + frame.offset as usize;
    let stored = data
        .get(start..start + frame.stored_bytes as usize)
        .ok_or("the frame lies outside the file")?;
    let raw = zstd::bulk::decompress(stored, frame.raw_bytes as usize)
        .map_err(|e| format!("cannot decompress: {e}"))?;
    if raw.len() as u64 != frame.raw_bytes || Digest::of(&raw) != frame.digest {
        return Err("does not match its digest (the file is corrupt)".into());
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_damage_is_named() {
        let file = write(b"LTOKTEST", 3, b"{\"a\":1}", b"payload");
        let layout = open(&file, b"LTOKTEST", 3, "test file").unwrap();
        assert_eq!(layout.manifest(&file), b"{\"a\":1}");
        assert_eq!(&file[layout.payload_start..], b"payload");
        assert!(open(&file, b"LTOKOTHR", 3, "test file")
            .unwrap_err()
            .contains("LTOKOTHR is missing"));
        assert!(open(&file, b"LTOKTEST", 4, "test file")
            .unwrap_err()
            .contains("format version 3"));
        assert!(open(&file[..file.len() - 1], b"LTOKTEST", 3, "t")
            .unwrap_err()
            .contains("truncated"));
        let mut bad = file.clone();
        bad[HEADER_SIZE] ^= 1;
        assert!(open(&bad, b"LTOKTEST", 3, "t")
            .unwrap_err()
            .contains("digest"));
    }

    #[test]
    fn frames_round_trip_and_damage_is_caught() {
        let mut payload = b"xx".to_vec();
        let frame = append_frame(&mut payload, &[7u8; 5000]).unwrap();
        assert_eq!(frame.offset, 2);
        assert_eq!(read_frame(&payload, 0, &frame).unwrap(), vec![7u8; 5000]);
        let wrong = Frame {
            digest: Digest::of(b"other"),
            ..frame
        };
        assert!(read_frame(&payload, 0, &wrong)
            .unwrap_err()
            .contains("corrupt"));
        assert!(read_frame(&payload, 10_000, &frame).is_err());
    }
}
