//! The index file (little-endian): magic `LTOKIVF\0`, `u32` format version, `u32`
//! reserved, `u64` header length, 32-byte BLAKE3 of everything after this field, the JSON
//! header, then the centres (f32), list offsets (i64), list sizes (i32), data, ids (i64).

use std::path::Path;

use ltokit::digest::Digest;
use ltokit::{Error, Result};

use super::{veclen, IvfIndex, GROUP};
use crate::data::DType;
use crate::metric::Metric;

const MAGIC: &[u8; 8] = b"LTOKIVF\0";
/// Version of the index file format.
pub const FORMAT_VERSION: u32 = 1;

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    metric: Metric,
    dtype: DType,
    dim: usize,
    veclen: usize,
    n_lists: usize,
    rows: usize,
}

impl IvfIndex {
    /// Writes the index file.
    pub fn save(&self, path: &Path) -> Result<()> {
        let header = serde_json::to_vec(&Header {
            metric: self.metric,
            dtype: self.dtype,
            dim: self.dim,
            veclen: self.veclen,
            n_lists: self.n_lists(),
            rows: self.ids.len(),
        })
        .map_err(|source| Error::Serialize {
            what: "the IVF index header".into(),
            source,
        })?;
        let mut body = header.clone();
        body.extend(self.centers.iter().flat_map(|v| v.to_le_bytes()));
        body.extend(self.list_offset.iter().flat_map(|v| v.to_le_bytes()));
        body.extend(self.list_size.iter().flat_map(|v| v.to_le_bytes()));
        body.extend_from_slice(&self.data);
        body.extend(self.ids.iter().flat_map(|v| v.to_le_bytes()));
        let mut out = Vec::with_capacity(56 + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(header.len() as u64).to_le_bytes());
        out.extend_from_slice(Digest::of(&body).as_bytes());
        out.extend_from_slice(&body);
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, &out).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// Reads an index file.
    pub fn load(path: &Path) -> Result<Self> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&path.display().to_string(), &data)
    }

    /// Parses an index file's bytes.
    pub fn from_bytes(label: &str, data: &[u8]) -> Result<Self> {
        let bad = |what: String| Error::UnrecognizedInput {
            input: label.to_string(),
            what: format!("not a usable ltokit IVF index: {what}"),
        };
        if data.len() < 56 || &data[..8] != MAGIC {
            return Err(bad(
                "the magic LTOKIVF is missing (another file, or truncated)".into(),
            ));
        }
        let version = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}; this ltokit reads {FORMAT_VERSION}"
            )));
        }
        let header_len = u64::from_le_bytes(data[16..24].try_into().unwrap_or([0; 8])) as usize;
        let body = &data[56..];
        if Digest::of(body).as_bytes()[..] != data[24..56] {
            return Err(bad("checksum mismatch (truncated or corrupted)".into()));
        }
        let header: Header = serde_json::from_slice(
            body.get(..header_len)
                .ok_or_else(|| bad("truncated header".into()))?,
        )
        .map_err(|e| bad(format!("header: {e}")))?;
        if header.dim == 0
            || header.dim > 1 << 20
            || header.n_lists > 1 << 30
            || header.veclen != veclen(header.dtype, header.dim)
            || !header.rows.is_multiple_of(GROUP)
        {
            return Err(bad("inconsistent header".into()));
        }
        let mut at = header_len;
        let mut take = |n: usize| -> Result<&[u8]> {
            let s = body
                .get(
                    at..at
                        .checked_add(n)
                        .ok_or_else(|| bad("sizes overflow".into()))?,
                )
                .ok_or_else(|| bad("truncated payload".into()))?;
            at += n;
            Ok(s)
        };
        let n = header.n_lists;
        let centers = take(
            n.checked_mul(header.dim * 4)
                .ok_or_else(|| bad("sizes overflow".into()))?,
        )?
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
        let list_offset: Vec<i64> = take(n * 8)?
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let list_size: Vec<i32> = take(n * 4)?
            .chunks(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let payload = take(
            header
                .rows
                .checked_mul(header.dim * header.dtype.size())
                .ok_or_else(|| bad("sizes overflow".into()))?,
        )?
        .to_vec();
        let ids = take(header.rows * 8)?
            .chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if at != body.len() {
            return Err(bad("trailing bytes after the payload".into()));
        }
        let mut expect = 0i64;
        for (l, (&off, &size)) in list_offset.iter().zip(&list_size).enumerate() {
            if off != expect || size < 0 {
                return Err(bad(format!("list {l} has offset {off} and size {size}")));
            }
            expect += (size as usize).next_multiple_of(GROUP) as i64;
        }
        if expect as usize != header.rows {
            return Err(bad("list sizes do not add up to the stored rows".into()));
        }
        Ok(IvfIndex {
            metric: header.metric,
            dtype: header.dtype,
            dim: header.dim,
            veclen: header.veclen,
            centers,
            list_offset,
            list_size,
            data: payload,
            ids,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic;

    #[test]
    fn file_round_trip_and_damage() {
        let base = synthetic(50, 16, 2, DType::F16, 1);
        let assignment: Vec<u32> = (0..50).map(|i| (i % 2) as u32).collect();
        let index = IvfIndex::from_assignment(
            Metric::Cosine,
            &base,
            &(0..50).collect::<Vec<_>>(),
            vec![0.5; 32],
            &assignment,
        )
        .unwrap();
        let path = std::env::temp_dir().join(format!("ltokit-ivf-{}.ltkivf", std::process::id()));
        index.save(&path).unwrap();
        assert_eq!(IvfIndex::load(&path).unwrap(), index);
        let good = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        for cut in [0, 10, 56, good.len() / 2, good.len() - 1] {
            assert!(IvfIndex::from_bytes("cut", &good[..cut]).is_err());
        }
        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 1;
        assert!(IvfIndex::from_bytes("flip", &flipped)
            .unwrap_err()
            .to_string()
            .contains("checksum"));
        let mut version = good.clone();
        version[8] = 7;
        assert!(IvfIndex::from_bytes("v", &version)
            .unwrap_err()
            .to_string()
            .contains("format version 7"));
    }
}
