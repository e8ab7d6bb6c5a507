//! Facts about LTO-IR blobs read from their header, without NVIDIA's tools.
//!
//! LTO-IR starts with the magic `ed 43 4e 7f`; bytes 4 and 5 are its container version
//! (1.65 from CUDA 13.0, 1.67 from 13.5), which gives a cheap producer check before
//! nvJitLink is asked to link it.

use crate::version::Version;

/// The first four bytes of every LTO-IR blob.
pub const MAGIC: [u8; 4] = [0xed, 0x43, 0x4e, 0x7f];

/// IR container versions and the CUDA release that produces them (measured).
const KNOWN_PRODUCERS: &[((u16, u16), Version)] = &[
    ((1, 65), Version::new(13, 0)),
    ((1, 67), Version::new(13, 5)),
];

/// True when `data` starts with the LTO-IR magic.
pub fn is_ltoir(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// The IR container version `(major, minor)` stored in bytes 4–5.
pub fn header_version(data: &[u8]) -> Option<(u16, u16)> {
    if !is_ltoir(data) || data.len() < 6 {
        return None;
    }
    Some((u16::from(data[4]), u16::from(data[5])))
}

/// The CUDA release known to produce IR of this container version, if known.
pub fn producer_of(version: (u16, u16)) -> Option<Version> {
    KNOWN_PRODUCERS
        .iter()
        .find(|(v, _)| *v == version)
        .map(|(_, producer)| *producer)
}

#[cfg(test)]
mod tests {
    use super::*;

    // That real NVRTC output maps to the NVRTC that made it is checked on real IR in
    // tests/pipeline.rs; here, only the reading of the header bytes.
    #[test]
    fn header_is_read_only_from_ltoir_of_six_bytes_or_more() {
        let ir = [0xed, 0x43, 0x4e, 0x7f, 1, 65, 2, 0x62];
        assert_eq!(header_version(&ir), Some((1, 65)));
        assert_eq!(header_version(&ir[..6]), Some((1, 65)));
        assert_eq!(header_version(&ir[..5]), None);
        assert_eq!(header_version(b"\x7fELF\x02\x01"), None);
        assert_eq!(
            producer_of((0, 0)),
            None,
            "an unknown version has no producer"
        );
    }
}
