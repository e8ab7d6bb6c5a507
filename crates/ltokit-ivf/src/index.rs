//! The IVF-Flat index on the host: interleaved lists, building from an assignment,
//! adding vectors, and the index file format.
//!
//! Layout (as cuVS): each list holds its rows in groups of 32; within a group, the
//! `veclen`-element chunks of rows 0..32 are interleaved (chunk `c` of row `r` at element
//! `(c * 32 + r) * veclen` of the group), so that a warp reading chunk `c` of its 32 rows
//! makes one coalesced 16-byte load per lane. `veclen = 16 / element size` when the
//! dimension allows it, else 1. Lists are padded to a multiple of 32 rows; padding ids
//! are -1.
//!
//! File (little-endian): magic `LTOKIVF\0`, `u32` format version, `u32` reserved, `u64`
//! header length, 32-byte BLAKE3 of everything after this field, the JSON header, then
//! the centres (f32), list offsets (i64), list sizes (i32), data, ids (i64).

use std::path::Path;

use ltokit::digest::Digest;
use ltokit::{Error, Result};

use crate::data::{DType, Matrix};
use crate::metric::Metric;

/// Rows per interleaved group.
pub const GROUP: usize = 32;

/// One list's rows and ids, with the slices of the index's data and ids it fills.
type ListWork<'a> = (&'a Vec<(&'a [u8], i64)>, &'a mut [u8], &'a mut [i64]);
const MAGIC: &[u8; 8] = b"LTOKIVF\0";
/// Version of the index file format.
pub const FORMAT_VERSION: u32 = 1;

/// The element width of one interleaved chunk for a type and dimension.
pub fn veclen(dtype: DType, dim: usize) -> usize {
    let max = 16 / dtype.size();
    if dim.is_multiple_of(max) {
        max
    } else {
        1
    }
}

/// Where an assignment puts each row in the interleaved lists: lists in order, each list's
/// rows in the order of the base (as [`IvfIndex::from_assignment`] lays them out), each
/// list padded to a multiple of [`GROUP`] rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// First padded row of each list.
    pub list_offset: Vec<i64>,
    /// Rows in each list.
    pub list_size: Vec<i32>,
    /// Padded row of each base row.
    pub slot: Vec<u32>,
    /// Padded rows in all.
    pub padded_rows: usize,
}

impl Placement {
    /// The placement of rows assigned to `n_lists` lists.
    pub fn of(assignment: &[u32], n_lists: usize) -> Result<Self> {
        let mut list_size = vec![0i32; n_lists];
        for (row, &list) in assignment.iter().enumerate() {
            let size = list_size.get_mut(list as usize).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "vector {row} is assigned to list {list}, but there are {n_lists}"
                ))
            })?;
            *size += 1;
        }
        let mut list_offset = Vec::with_capacity(n_lists);
        let mut padded_rows = 0usize;
        for &size in &list_size {
            list_offset.push(padded_rows as i64);
            padded_rows += (size as usize).next_multiple_of(GROUP);
        }
        if padded_rows > u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "{padded_rows} padded rows do not fit the 32-bit row numbers of a device layout; \
                 split the base into several indexes"
            )));
        }
        let mut next: Vec<u32> = list_offset.iter().map(|&o| o as u32).collect();
        let slot = assignment
            .iter()
            .map(|&list| {
                let at = next[list as usize];
                next[list as usize] += 1;
                at
            })
            .collect();
        Ok(Placement {
            list_offset,
            list_size,
            slot,
            padded_rows,
        })
    }

    /// The source id of each padded row: `ids[r]` at `slot[r]`, −1 for padding.
    pub fn padded_ids(&self, ids: &[i64]) -> Vec<i64> {
        let mut out = vec![-1i64; self.padded_rows];
        for (&slot, &id) in self.slot.iter().zip(ids) {
            out[slot as usize] = id;
        }
        out
    }
}

/// An IVF-Flat index.
#[derive(Debug, Clone, PartialEq)]
pub struct IvfIndex {
    /// Metric the index searches with.
    pub metric: Metric,
    /// Element type of the vectors.
    pub dtype: DType,
    /// Dimensions.
    pub dim: usize,
    /// Chunk width of the interleaved layout.
    pub veclen: usize,
    /// `n_lists * dim` centres.
    pub centers: Vec<f32>,
    /// First row of each list (a multiple of 32).
    pub list_offset: Vec<i64>,
    /// Rows in each list.
    pub list_size: Vec<i32>,
    /// Interleaved rows, padded.
    pub data: Vec<u8>,
    /// Source id of each padded row (-1 for padding).
    pub ids: Vec<i64>,
}

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
    /// Number of lists.
    pub fn n_lists(&self) -> usize {
        self.list_size.len()
    }

    /// Number of indexed vectors.
    pub fn len(&self) -> usize {
        self.list_size.iter().map(|&s| s as usize).sum()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Builds the lists: row `i` of `base` (source id `ids[i]`) goes to list `assignment[i]`.
    pub fn from_assignment(
        metric: Metric,
        base: &Matrix,
        ids: &[i64],
        centers: Vec<f32>,
        assignment: &[u32],
    ) -> Result<Self> {
        let n_lists = centers.len() / base.dim.max(1);
        if centers.len() != n_lists * base.dim || n_lists == 0 {
            return Err(Error::InvalidArgument(format!(
                "{} centre values do not make whole {}-dimensional centres",
                centers.len(),
                base.dim
            )));
        }
        if ids.len() != base.rows || assignment.len() != base.rows {
            return Err(Error::InvalidArgument(format!(
                "{} vectors but {} ids and {} assignments",
                base.rows,
                ids.len(),
                assignment.len()
            )));
        }
        check_ids(ids)?;
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_lists];
        for (row, &list) in assignment.iter().enumerate() {
            let list = list as usize;
            if list >= n_lists {
                return Err(Error::InvalidArgument(format!(
                    "vector {row} is assigned to list {list}, but there are {n_lists}"
                )));
            }
            members[list].push(row);
        }
        let rows_of: Vec<Vec<(&[u8], i64)>> = members
            .iter()
            .map(|m| m.iter().map(|&r| (base.row_bytes(r), ids[r])).collect())
            .collect();
        Ok(Self::from_lists(
            metric, base.dtype, base.dim, centers, &rows_of,
        ))
    }

    /// Builds from explicit lists of (row bytes, id).
    fn from_lists(
        metric: Metric,
        dtype: DType,
        dim: usize,
        centers: Vec<f32>,
        lists: &[Vec<(&[u8], i64)>],
    ) -> Self {
        let veclen = veclen(dtype, dim);
        let elem = dtype.size();
        let padded: usize = lists.iter().map(|l| l.len().next_multiple_of(GROUP)).sum();
        let mut data = vec![0u8; padded * dim * elem];
        let mut ids = vec![-1i64; padded];
        let mut list_offset = Vec::with_capacity(lists.len());
        let mut list_size = Vec::with_capacity(lists.len());
        // Each list's rows and ids, as disjoint slices of `data` and `ids`, so that lists
        // are laid out on all cores at once.
        let mut work: Vec<ListWork<'_>> = Vec::with_capacity(lists.len());
        let (mut data_rest, mut ids_rest) = (&mut data[..], &mut ids[..]);
        let mut offset = 0usize;
        for list in lists {
            let rows = list.len().next_multiple_of(GROUP);
            list_offset.push(offset as i64);
            list_size.push(list.len() as i32);
            let (d, dr) = std::mem::take(&mut data_rest).split_at_mut(rows * dim * elem);
            let (i, ir) = std::mem::take(&mut ids_rest).split_at_mut(rows);
            (data_rest, ids_rest) = (dr, ir);
            work.push((list, d, i));
            offset += rows;
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(work.len().max(1));
        let per_thread = work.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for chunk in work.chunks_mut(per_thread) {
                scope.spawn(move || {
                    for (list, data, ids) in chunk.iter_mut() {
                        for (r, (row, id)) in list.iter().enumerate() {
                            let group_base = r / GROUP * GROUP * dim;
                            let lane = r % GROUP;
                            for c in 0..dim / veclen {
                                let dst = (group_base + (c * GROUP + lane) * veclen) * elem;
                                data[dst..dst + veclen * elem].copy_from_slice(
                                    &row[c * veclen * elem..(c + 1) * veclen * elem],
                                );
                            }
                            ids[r] = *id;
                        }
                    }
                });
            }
        });
        IvfIndex {
            metric,
            dtype,
            dim,
            veclen,
            centers,
            list_offset,
            list_size,
            data,
            ids,
        }
    }

    /// Row `r` of list `list` (de-interleaved bytes) and its id.
    pub fn row(&self, list: usize, r: usize) -> (Vec<u8>, i64) {
        let elem = self.dtype.size();
        let offset = self.list_offset[list] as usize;
        let group_base = (offset + r / GROUP * GROUP) * self.dim;
        let lane = r % GROUP;
        let mut out = Vec::with_capacity(self.dim * elem);
        for c in 0..self.dim / self.veclen {
            let src = (group_base + (c * GROUP + lane) * self.veclen) * elem;
            out.extend_from_slice(&self.data[src..src + self.veclen * elem]);
        }
        (out, self.ids[offset + r])
    }

    /// Row `r` of list `list` as f32.
    pub fn row_f32(&self, list: usize, r: usize) -> Vec<f32> {
        let (bytes, _) = self.row(list, r);
        Matrix {
            dtype: self.dtype,
            rows: 1,
            dim: self.dim,
            bytes,
        }
        .row_f32(0)
    }

    /// Adds vectors with caller-given ids to the lists `assignment` names (the nearest
    /// centres); the layout is rebuilt.
    pub fn add(&mut self, vectors: &Matrix, ids: &[i64], assignment: &[u32]) -> Result<()> {
        if vectors.dtype != self.dtype || vectors.dim != self.dim {
            return Err(Error::InvalidArgument(format!(
                "adding {}-dimensional {} vectors to a {}-dimensional {} index",
                vectors.dim,
                vectors.dtype.name(),
                self.dim,
                self.dtype.name()
            )));
        }
        if ids.len() != vectors.rows || assignment.len() != vectors.rows {
            return Err(Error::InvalidArgument(format!(
                "{} vectors but {} ids and {} assignments",
                vectors.rows,
                ids.len(),
                assignment.len()
            )));
        }
        check_ids(ids)?;
        let existing: Vec<Vec<(Vec<u8>, i64)>> = (0..self.n_lists())
            .map(|l| {
                (0..self.list_size[l] as usize)
                    .map(|r| self.row(l, r))
                    .collect()
            })
            .collect();
        let mut lists: Vec<Vec<(&[u8], i64)>> = existing
            .iter()
            .map(|l| l.iter().map(|(b, id)| (b.as_slice(), *id)).collect())
            .collect();
        for (i, &list) in assignment.iter().enumerate() {
            let target = lists
                .get_mut(list as usize)
                .ok_or_else(|| Error::InvalidArgument(format!("list {list} does not exist")))?;
            target.push((vectors.row_bytes(i), ids[i]));
        }
        *self = Self::from_lists(
            self.metric,
            self.dtype,
            self.dim,
            std::mem::take(&mut self.centers),
            &lists,
        );
        Ok(())
    }

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

/// Source ids must be non-negative: -1 marks padding and "no result".
fn check_ids(ids: &[i64]) -> Result<()> {
    match ids.iter().position(|&id| id < 0) {
        Some(i) => Err(Error::InvalidArgument(format!(
            "id {} of vector {i} is negative; ids must be >= 0",
            ids[i]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic;

    #[test]
    fn a_placement_puts_rows_where_the_host_layout_does() {
        // An uneven assignment with an empty list and a list of more than one group.
        let mut rng = crate::data::Rng::new(5);
        let assignment: Vec<u32> = (0..300).map(|_| [0, 0, 0, 2, 3][rng.below(5)]).collect();
        let base = synthetic(300, 8, 3, DType::F32, 4);
        let ids: Vec<i64> = (0..300).map(|i| 7 * i + 1).collect();
        let index =
            IvfIndex::from_assignment(Metric::L2, &base, &ids, vec![0.0; 4 * 8], &assignment)
                .unwrap();
        let placement = Placement::of(&assignment, 4).unwrap();
        assert_eq!(placement.list_offset, index.list_offset);
        assert_eq!(placement.list_size, index.list_size);
        assert_eq!(placement.padded_rows, index.ids.len());
        assert_eq!(placement.padded_ids(&ids), index.ids);
        assert_eq!(placement.list_size[1], 0);
        assert!(placement.list_size[0] > 32);
        // A list past the count is an error naming the row.
        let err = Placement::of(&[0, 4], 4).unwrap_err().to_string();
        assert!(err.contains("vector 1") && err.contains("list 4"), "{err}");
    }

    #[test]
    fn interleaving_round_trips_every_row_and_pads() {
        for (dtype, dim) in [
            (DType::F32, 8),
            (DType::F32, 7),
            (DType::F16, 24),
            (DType::I8, 32),
            (DType::U8, 20),
        ] {
            let base = synthetic(100, dim, 3, dtype, 9);
            let assignment: Vec<u32> = (0..100)
                .map(|i| (i % 3) as u32 * (i % 5 != 0) as u32)
                .collect();
            let ids: Vec<i64> = (0..100).map(|i| 1000 + i).collect();
            let index =
                IvfIndex::from_assignment(Metric::L2, &base, &ids, vec![0.0; 4 * dim], &assignment)
                    .unwrap();
            assert_eq!(index.veclen, veclen(dtype, dim));
            assert_eq!(index.len(), 100);
            assert_eq!(index.list_size[3], 0, "an empty list");
            for l in 0..4 {
                assert_eq!(index.list_offset[l] % 32, 0);
                let members: Vec<usize> =
                    (0..100).filter(|&i| assignment[i] as usize == l).collect();
                for (r, &i) in members.iter().enumerate() {
                    let (bytes, id) = index.row(l, r);
                    assert_eq!(
                        bytes,
                        base.row_bytes(i),
                        "{dtype:?} dim {dim} list {l} row {r}"
                    );
                    assert_eq!(id, ids[i]);
                }
            }
            assert!(index.ids.iter().filter(|&&i| i == -1).count() == index.ids.len() - 100);
        }
    }

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

    #[test]
    fn add_appends_with_given_ids() {
        let base = synthetic(40, 8, 2, DType::F32, 2);
        let mut index = IvfIndex::from_assignment(
            Metric::L2,
            &base,
            &(0..40).collect::<Vec<_>>(),
            vec![0.0; 16],
            &[0; 40],
        )
        .unwrap();
        let more = synthetic(5, 8, 1, DType::F32, 3);
        assert!(index
            .add(&more, &[-5, 77, 78, 79, 80], &[1, 1, 0, 1, 1])
            .is_err());
        index
            .add(&more, &[5, 77, 78, 79, 80], &[1, 1, 0, 1, 1])
            .unwrap();
        assert_eq!(index.list_size, vec![41, 4]);
        assert_eq!(index.row(1, 0), (more.row_bytes(0).to_vec(), 5));
        assert!(index
            .add(&synthetic(1, 4, 1, DType::F32, 1), &[1], &[0])
            .is_err());
    }
}
