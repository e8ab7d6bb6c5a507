//! The envelope shared by ltokit's manifest files (bundles, providers): a 64-byte header
//! — 8-byte magic, `u32` format version, `u32` reserved, `u64` manifest length, 32-byte
//! BLAKE3 of the manifest, `u64` payload length — then the manifest, then the payload.
//! What the manifest and payload hold is the file kind's business (bundles and providers
//! of format 2: a zstd-compressed JSON manifest and solid blocks, `formats::blocks`).

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
    open_versions(data, magic, &[version], what).map(|(layout, _)| layout)
}

/// Like [`open`] for a reader of several format versions (the last is the newest);
/// returns the layout and the file's version.
pub fn open_versions(
    data: &[u8],
    magic: &[u8; 8],
    versions: &[u32],
    what: &str,
) -> Result<(Layout, u32), String> {
    let (layout, found) = parse_header(data, data.len() as u64, magic, versions, what)?;
    check_manifest(data, layout.manifest(data))?;
    Ok((layout, found))
}

/// Checks the header at the start of `prefix` (at least [`HEADER_SIZE`] bytes of a
/// file of `file_len` bytes): magic, version and sizes. The manifest is checked
/// separately ([`check_manifest`]), so that a reader can stop at the manifest.
pub fn parse_header(
    prefix: &[u8],
    file_len: u64,
    magic: &[u8; 8],
    versions: &[u32],
    what: &str,
) -> Result<(Layout, u32), String> {
    if prefix.len() < HEADER_SIZE || &prefix[..8] != magic {
        let name = String::from_utf8_lossy(magic)
            .trim_end_matches('\0')
            .to_string();
        return Err(format!(
            "the magic {name} is missing (not a {what}, or truncated)"
        ));
    }
    let u64_at = |at: usize| u64::from_le_bytes(prefix[at..at + 8].try_into().unwrap_or([0; 8]));
    let found = u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]);
    if !versions.contains(&found) {
        let newest = versions.last().copied().unwrap_or(0);
        let why = if found > newest {
            "written by a newer ltokit"
        } else {
            "written by an older ltokit"
        };
        return Err(format!(
            "format version {found} ({why}), this ltokit reads version {}",
            versions
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    let manifest_len =
        usize::try_from(u64_at(16)).map_err(|_| "manifest length overflows".to_string())?;
    let payload_len =
        usize::try_from(u64_at(56)).map_err(|_| "payload length overflows".to_string())?;
    let expected = HEADER_SIZE
        .checked_add(manifest_len)
        .and_then(|n| n.checked_add(payload_len));
    if expected.map(|n| n as u64) != Some(file_len) {
        return Err(format!(
            "the header announces {} bytes, the file has {file_len} (truncated or padded)",
            expected.map_or("too many".into(), |n| n.to_string()),
        ));
    }
    let layout = Layout {
        manifest_len,
        payload_start: HEADER_SIZE + manifest_len,
        payload_len,
    };
    Ok((layout, found))
}

/// Checks `manifest` against the digest in `header` (a file's first [`HEADER_SIZE`]
/// bytes, already accepted by [`parse_header`]).
pub fn check_manifest(header: &[u8], manifest: &[u8]) -> Result<(), String> {
    if header.len() < HEADER_SIZE || Digest::of(manifest).as_bytes()[..] != header[24..56] {
        return Err("the manifest digest does not match (the file is corrupt)".into());
    }
    Ok(())
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
            .contains("format version 3 (written by an older ltokit)"));
        assert_eq!(
            open_versions(&file, b"LTOKTEST", &[1, 3], "t").unwrap().1,
            3
        );
        assert!(open_versions(&file, b"LTOKTEST", &[1, 2], "t")
            .unwrap_err()
            .contains("newer ltokit), this ltokit reads version 1 and 2"));
        assert!(open(&file[..file.len() - 1], b"LTOKTEST", 3, "t")
            .unwrap_err()
            .contains("truncated"));
        let mut bad = file.clone();
        bad[HEADER_SIZE] ^= 1;
        assert!(open(&bad, b"LTOKTEST", 3, "t")
            .unwrap_err()
            .contains("digest"));
    }
}
