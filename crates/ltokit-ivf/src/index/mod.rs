//! The IVF-Flat index on the host: interleaved lists, building from an assignment,
//! adding vectors; its file format is in [`file`](mod@file).
//!
//! Layout (as cuVS): each list holds its rows in groups of 32; within a group, the
//! `veclen`-element chunks of rows 0..32 are interleaved (chunk `c` of row `r` at element
//! `(c * 32 + r) * veclen` of the group), so that a warp reading chunk `c` of its 32 rows
//! makes one coalesced 16-byte load per lane. `veclen = 16 / element size` when the
//! dimension allows it, else 1. Lists are padded to a multiple of 32 rows; padding ids
//! are -1.

use ltokit::{Error, Result};

use crate::data::{DType, Matrix};
use crate::metric::Metric;

pub mod file;

pub use file::FORMAT_VERSION;

/// Rows per interleaved group.
pub const GROUP: usize = 32;

/// One list's rows and ids, with the slices of the index's data and ids it fills.
type ListWork<'a> = (&'a Vec<(&'a [u8], i64)>, &'a mut [u8], &'a mut [i64]);

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
            list_size[checked_list(row, list, n_lists)?] += 1;
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
            members[checked_list(row, list, n_lists)?].push(row);
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
}

/// The list row `row` is assigned to, or an error naming both when there is no such list.
fn checked_list(row: usize, list: u32, n_lists: usize) -> Result<usize> {
    let list = list as usize;
    if list >= n_lists {
        return Err(Error::InvalidArgument(format!(
            "vector {row} is assigned to list {list}, but there are {n_lists}"
        )));
    }
    Ok(list)
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
