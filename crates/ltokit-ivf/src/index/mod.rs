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
    /// The placement of rows assigned to `n_lists` lists, each list's rows in base order.
    pub fn of(assignment: &[u32], n_lists: usize) -> Result<Self> {
        Self::of_rows(assignment, n_lists, 0..assignment.len() as u32)
    }

    /// The placement of rows assigned to `n_lists` lists, each list's rows in the order
    /// they come in `order` (a permutation of the rows, e.g. [`nearest_first_order`]).
    pub fn of_order(assignment: &[u32], n_lists: usize, order: &[u32]) -> Result<Self> {
        check_order(order, assignment.len())?;
        Self::of_rows(assignment, n_lists, order.iter().copied())
    }

    /// The placement, each list's rows in the order `rows` gives them (every row once).
    fn of_rows(
        assignment: &[u32],
        n_lists: usize,
        rows: impl Iterator<Item = u32>,
    ) -> Result<Self> {
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
        let mut slot = vec![0u32; assignment.len()];
        for row in rows {
            let list = assignment[row as usize] as usize;
            slot[row as usize] = next[list];
            next[list] += 1;
        }
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

/// Rows each list holds first, nearest its centre ([`nearest_first_order`]): the list
/// scan's seed reads a list's first rows (128 of i8 × 128, 64 of f16 × 128), and the rows
/// nearest the centre give its queries tighter bounds than rows in base order. A CPU model of lowdim-i8 × 10
/// (docs/wip/keeps-sim.py, session 36): rows kept a query 54.9 → 45.2 with the 64 nearest
/// first. Measured on the H100 (session 38, same calls, against base order, device QPS,
/// with the seed's 32 KiB of then): lowdim-f16 +0.2 to +2.5 %, lowdim (f32, no seed) −0.6
/// to +2.3 %, wide-i8 −0.7 to +1.7 %, the images −1.5 to +0.4 %; with the seed's 16 KiB
/// that it allows (`SEED_BYTES`, gpu/list_major/seed.rs), lowdim-i8 means of +0.6
/// to +3.2 %. Its cost is at build: every row scored against its centre on the host
/// (lowdim-i8's 1M rows built on the GPU in 0.26 s against 0.13, with the order of then;
/// [`crate::build::row_order`] has since cut the host's part about threefold).
pub const NEAREST_FIRST_ROWS: usize = 64;

/// Checks that `order` is a permutation of `rows` rows.
fn check_order(order: &[u32], rows: usize) -> Result<()> {
    let mut seen = vec![false; rows];
    for &row in order {
        match seen.get_mut(row as usize) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "row order names row {row} twice or past the {rows} rows: \
                     give each row exactly once"
                )))
            }
        }
    }
    if order.len() != rows {
        return Err(Error::InvalidArgument(format!(
            "row order of {} rows for {rows} rows: give each row exactly once",
            order.len()
        )));
    }
    Ok(())
}

/// The order in which rows are placed in their lists ([`Placement::of_order`],
/// [`IvfIndex::from_assignment_order`]) so that each list holds first its
/// [`NEAREST_FIRST_ROWS`] rows of the lowest `to_centre` (nearest first), then its other
/// rows in base order. `to_centre[r]` is row r's score against its own centre (the
/// metric's, lower is nearer).
pub fn nearest_first_order(
    assignment: &[u32],
    n_lists: usize,
    to_centre: &[f32],
) -> Result<Vec<u32>> {
    if to_centre.len() != assignment.len() {
        return Err(Error::InvalidArgument(format!(
            "{} scores to the centre for {} rows",
            to_centre.len(),
            assignment.len()
        )));
    }
    // Each list's (score, row) pairs side by side, rows in base order (a counting sort):
    // the selection below reads them in place, not through scattered row numbers.
    let mut start = vec![0usize; n_lists + 1];
    for (row, &list) in assignment.iter().enumerate() {
        start[checked_list(row, list, n_lists)? + 1] += 1;
    }
    for l in 0..n_lists {
        start[l + 1] += start[l];
    }
    let mut next = start.clone();
    let mut by_list = vec![(0f32, 0u32); assignment.len()];
    for (row, &list) in assignment.iter().enumerate() {
        let at = &mut next[list as usize];
        by_list[*at] = (to_centre[row], row as u32);
        *at += 1;
    }
    // A total order (f32::total_cmp, which places NaN too), ties by row, so that the order
    // is reproducible and the sorts never meet an inconsistent comparison.
    let cmp = |a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    let mut head = Vec::with_capacity(assignment.len());
    let mut is_head = vec![false; assignment.len()];
    for l in 0..n_lists {
        let rows = &mut by_list[start[l]..start[l + 1]];
        let n = rows.len().min(NEAREST_FIRST_ROWS);
        if n == 0 {
            continue;
        }
        if n < rows.len() {
            rows.select_nth_unstable_by(n - 1, cmp);
        }
        let first = &mut rows[..n];
        first.sort_unstable_by(cmp);
        for &(_, r) in first.iter() {
            is_head[r as usize] = true;
            head.push(r);
        }
    }
    head.extend((0..assignment.len() as u32).filter(|&r| !is_head[r as usize]));
    Ok(head)
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
        Self::from_assignment_rows(metric, base, ids, centers, assignment, None)
    }

    /// [`IvfIndex::from_assignment`] with each list's rows in the order they come in
    /// `order` (a permutation of the rows, e.g. [`nearest_first_order`]).
    pub fn from_assignment_order(
        metric: Metric,
        base: &Matrix,
        ids: &[i64],
        centers: Vec<f32>,
        assignment: &[u32],
        order: &[u32],
    ) -> Result<Self> {
        Self::from_assignment_rows(metric, base, ids, centers, assignment, Some(order))
    }

    /// The lists of an assignment, each list's rows in `order` (checked: every row once)
    /// or, without one, in base order.
    fn from_assignment_rows(
        metric: Metric,
        base: &Matrix,
        ids: &[i64],
        centers: Vec<f32>,
        assignment: &[u32],
        order: Option<&[u32]>,
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
        let mut place = |row: usize| -> Result<()> {
            members[checked_list(row, assignment[row], n_lists)?].push(row);
            Ok(())
        };
        match order {
            Some(order) => {
                check_order(order, base.rows)?;
                order.iter().try_for_each(|&row| place(row as usize))?;
            }
            None => (0..base.rows).try_for_each(&mut place)?,
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
        let threads = ltokit::parallel::threads(0, work.len());
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
    fn lists_hold_their_rows_nearest_the_centre_first_then_the_rest_in_base_order() {
        // List 0 has 150 rows (more than NEAREST_FIRST_ROWS), list 2 a few, list 1 none;
        // scores from a shuffle, with ties.
        let mut rng = crate::data::Rng::new(11);
        let assignment: Vec<u32> = (0..200).map(|i| if i % 4 == 3 { 2 } else { 0 }).collect();
        let to_centre: Vec<f32> = (0..200).map(|_| rng.below(90) as f32).collect();
        let order = nearest_first_order(&assignment, 3, &to_centre).unwrap();
        check_order(&order, 200).unwrap();
        let rows_of = |list: u32| -> Vec<u32> {
            order
                .iter()
                .copied()
                .filter(|&r| assignment[r as usize] == list)
                .collect()
        };
        for list in [0u32, 2] {
            let rows = rows_of(list);
            let n = rows.len().min(NEAREST_FIRST_ROWS);
            // An independent reference: every row of the list by (score, row), the first n.
            let mut by_score = rows.clone();
            by_score.sort_by(|&a, &b| {
                (to_centre[a as usize], a)
                    .partial_cmp(&(to_centre[b as usize], b))
                    .unwrap()
            });
            assert_eq!(rows[..n], by_score[..n], "list {list}: the nearest first");
            let mut rest: Vec<u32> = by_score[n..].to_vec();
            rest.sort();
            assert_eq!(rows[n..], rest[..], "list {list}: the rest in base order");
        }
        assert_eq!(rows_of(0).len(), 150);
        // The host layout and the device placement put every row in the same slot.
        let base = synthetic(200, 8, 3, DType::F32, 4);
        let ids: Vec<i64> = (0..200).map(|i| 3 * i + 2).collect();
        let index = IvfIndex::from_assignment_order(
            Metric::L2,
            &base,
            &ids,
            vec![0.0; 3 * 8],
            &assignment,
            &order,
        )
        .unwrap();
        let placement = Placement::of_order(&assignment, 3, &order).unwrap();
        assert_eq!(placement.padded_ids(&ids), index.ids);
        assert_eq!(index.ids[0], ids[rows_of(0)[0] as usize]);
        // Orders that are not permutations, and scores of the wrong length, are errors.
        let mut twice = order.clone();
        twice[1] = twice[0];
        let err = Placement::of_order(&assignment, 3, &twice)
            .unwrap_err()
            .to_string();
        assert!(err.contains("twice"), "{err}");
        let err = Placement::of_order(&assignment, 3, &order[1..])
            .unwrap_err()
            .to_string();
        assert!(err.contains("exactly once"), "{err}");
        assert!(nearest_first_order(&assignment, 3, &to_centre[1..]).is_err());
        // Scores that are not numbers still give an order of every row.
        let mut with_nan = to_centre.clone();
        with_nan[5] = f32::NAN;
        with_nan[9] = -f32::NAN;
        let order = nearest_first_order(&assignment, 3, &with_nan).unwrap();
        check_order(&order, 200).unwrap();
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
