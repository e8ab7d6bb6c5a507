//! Facts about LTO-IR blobs read from their header, without NVIDIA's tools.
//!
//! LTO-IR starts with the magic `ed 43 4e 7f`; bytes 4 and 5 are its container version
//! (1.65 from CUDA 13.0, 1.67 from 13.3 and 13.5) and bytes 6 and 7 a finer version that
//! grows with each release (2.98, 2.115, 2.131), which gives a cheap producer check before
//! nvJitLink is asked to link it.

use crate::version::Version;

/// The first four bytes of every LTO-IR blob.
pub const MAGIC: [u8; 4] = [0xed, 0x43, 0x4e, 0x7f];

/// IR header bytes 4–7 and the CUDA release whose NVRTC writes them, in increasing order
/// (measured on the pip wheels 13.0.88, 13.3.33 and 13.5.37 by the toolkit matrix test).
const KNOWN_PRODUCERS: &[([u8; 4], Version)] = &[
    ([1, 65, 2, 98], Version::new(13, 0)),
    ([1, 67, 2, 115], Version::new(13, 3)),
    ([1, 67, 2, 131], Version::new(13, 5)),
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

/// The oldest CUDA release known to write IR of this container version (bytes 4–5 only,
/// as fatbin entry headers record it). A lower bound: never refuses a pair that links.
pub fn producer_of(version: (u16, u16)) -> Option<Version> {
    KNOWN_PRODUCERS
        .iter()
        .find(|(v, _)| (u16::from(v[0]), u16::from(v[1])) == version)
        .map(|(_, producer)| *producer)
}

/// The newest CUDA release known to write IR no newer than this blob's header (bytes
/// 4–7 compared in order): the producer itself when its release was measured, else a
/// lower bound, so that the check never refuses IR that a linker could link (nvJitLink's
/// own version check catches the rest). `None` for IR older than every known release.
pub fn producer_of_ir(data: &[u8]) -> Option<Version> {
    if !is_ltoir(data) || data.len() < 8 {
        return None;
    }
    let key = [data[4], data[5], data[6], data[7]];
    KNOWN_PRODUCERS
        .iter()
        .rev()
        .find(|(v, _)| *v <= key)
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
