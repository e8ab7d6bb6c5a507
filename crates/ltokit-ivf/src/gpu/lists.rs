//! Lists on the device in the interleaved layout (see [`crate::index`]): uploaded from a
//! host index, or laid out on the device from rows already there (kernels/layout.cu),
//! with every row's squared norm beside them (kernels/row_norms.cu).

use ltokit::launch::{CudaSlice, CudaView, Elem, Extent, Gpu, Launch, Param};
use ltokit::{Error, Result};

use super::{grid_stride, nonempty, warp_per_row, IvfGpu, KernelSpec};
use crate::data::{DType, Matrix};
use crate::index::{veclen, IvfIndex, Placement};
use crate::metric::Metric;

/// `ivf_layout_scatter`'s parameters (kernels/layout.cu).
const SCATTER_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::U8, Extent::Any),    // rows
    Param::Buffer(Elem::U32, Extent::Any),   // slot of each row
    Param::I32,                              // rows
    Param::I32,                              // bytes a row
    Param::I32,                              // bytes a chunk
    Param::BufferMut(Elem::U8, Extent::Any), // interleaved data
];

/// `ivf_row_norms`'s parameters (kernels/row_norms.cu).
const ROW_NORMS_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::U8, Extent::Any),     // interleaved data
    Param::I64,                               // padded rows
    Param::I32,                               // dim
    Param::I32,                               // veclen
    Param::I32,                               // integer norms (8-bit types)
    Param::BufferMut(Elem::U32, Extent::Any), // the norms' bits
];

/// The kernel that computes the rows' squared norms of lists of `dtype`.
pub(crate) fn row_norms_kernel(dtype: DType) -> KernelSpec {
    KernelSpec {
        plan: format!("row_norms_{}", dtype.name()),
        signature: ROW_NORMS_SIGNATURE,
        shared: 0,
    }
}

/// The kernel that lays lists out on the device ([`DeviceLists::lay_out`]).
pub(crate) fn layout_kernel() -> KernelSpec {
    KernelSpec {
        plan: "layout_scatter".into(),
        signature: SCATTER_SIGNATURE,
        shared: 0,
    }
}

/// Lists on the GPU in the interleaved layout.
pub struct DeviceLists {
    pub(crate) dtype: DType,
    pub(crate) dim: usize,
    pub(crate) veclen: usize,
    pub(crate) n_lists: usize,
    pub(crate) data: CudaSlice<u8>,
    pub(crate) list_offset: CudaSlice<i64>,
    pub(crate) list_size: CudaSlice<i32>,
    pub(crate) ids: CudaSlice<i64>,
    /// The squared norm of every padded row, in the order of `data` (an i32 for 8-bit
    /// types, exact; the bits of an f32 for float types): the list-major scan's L2 and
    /// cosine scores take them with each step's rows instead of summing squares in every
    /// tile that reads the step. 4 bytes a row: 3 % of an i8 × 128 index, 0.5 % of the
    /// 784-byte images, 0.8 % of f32 × 128.
    pub(crate) row_norms: CudaSlice<u32>,
    /// The list numbers, longest list first ([`longest_first`]): the list-major scan
    /// starts the blocks of long lists first, so short ones fill its last wave.
    pub(crate) list_order: CudaSlice<i32>,
    host_list_size: Vec<i32>,
    /// Rows in all lists (the sum of `host_list_size`).
    n_rows: usize,
}

impl DeviceLists {
    /// Uploads an index's lists (and computes their rows' norms there).
    pub fn from_index(engine: &IvfGpu, index: &IvfIndex) -> Result<Self> {
        let gpu = engine.gpu();
        let data = gpu.upload(&nonempty(&index.data))?;
        let padded_rows = index.data.len() / (index.dim * index.dtype.size()).max(1);
        Ok(DeviceLists {
            dtype: index.dtype,
            dim: index.dim,
            veclen: index.veclen,
            n_lists: index.n_lists(),
            row_norms: row_norms(
                engine,
                &data,
                index.dtype,
                index.dim,
                index.veclen,
                padded_rows,
            )?,
            data,
            list_offset: gpu.upload(&index.list_offset)?,
            list_size: gpu.upload(&index.list_size)?,
            ids: gpu.upload(&nonempty(&index.ids))?,
            list_order: gpu.upload(&nonempty(&longest_first(&index.list_size)))?,
            host_list_size: index.list_size.clone(),
            n_rows: total_rows(&index.list_size),
        })
    }

    /// Lays out `rows` (on the device: `placement.slot.len()` rows of `dim` values of
    /// `dtype`, as stored) in the lists `placement` gives them, with source ids `ids`;
    /// the rows never leave the device. The same lists as [`DeviceLists::from_index`] of
    /// [`IvfIndex::from_assignment`] with the same assignment.
    pub fn lay_out(
        engine: &IvfGpu,
        rows: &CudaView<'_, u8>,
        dtype: DType,
        dim: usize,
        placement: &Placement,
        ids: &[i64],
    ) -> Result<Self> {
        let n = placement.slot.len();
        let row_bytes = dim * dtype.size();
        if dim == 0 || rows.len() != n * row_bytes || ids.len() != n {
            return Err(Error::InvalidArgument(format!(
                "{} bytes on the device, {} ids and {n} placed rows do not make rows of \
                 {dim} {} values",
                rows.len(),
                ids.len(),
                dtype.name()
            )));
        }
        let gpu = engine.gpu();
        let veclen = veclen(dtype, dim);
        let mut data = gpu.zeros::<u8>((placement.padded_rows * row_bytes).max(1))?;
        if n > 0 {
            let slots = gpu.upload(&placement.slot)?;
            let spec = layout_kernel();
            let scatter = engine
                .kernels
                .kernel(&spec.plan, spec.signature, spec.shared)?;
            let (n_i, row_i, chunk_i) =
                (n as i32, row_bytes as i32, (veclen * dtype.size()) as i32);
            let launch = Launch::on(gpu.stream(), &scatter, warp_per_row(n))
                .view(rows)
                .buffer(&slots)
                .scalar(&n_i)
                .scalar(&row_i)
                .scalar(&chunk_i)
                .buffer_mut(&mut data);
            // SAFETY: reads n rows of row_bytes (rows.len() = n × row_bytes, checked above)
            // and n slots, each below padded_rows (Placement::of); writes one padded row of
            // row_bytes at each slot of data (padded_rows × row_bytes). row_bytes is a
            // multiple of the chunk bytes, and 16-byte chunks only come with rows of whole
            // 16-byte chunks (index::veclen).
            unsafe { launch.run() }?;
        }
        Ok(DeviceLists {
            dtype,
            dim,
            veclen,
            n_lists: placement.list_size.len(),
            row_norms: row_norms(engine, &data, dtype, dim, veclen, placement.padded_rows)?,
            data,
            list_offset: gpu.upload(&placement.list_offset)?,
            list_size: gpu.upload(&placement.list_size)?,
            ids: gpu.upload(&nonempty(&placement.padded_ids(ids)))?,
            list_order: gpu.upload(&nonempty(&longest_first(&placement.list_size)))?,
            host_list_size: placement.list_size.clone(),
            n_rows: total_rows(&placement.list_size),
        })
    }

    /// The lists as a host index with `centers` (what [`DeviceLists::from_index`] would
    /// upload again).
    pub fn download(&self, gpu: &Gpu, metric: Metric, centers: Vec<f32>) -> Result<IvfIndex> {
        let list_offset = gpu.download(&self.list_offset)?;
        let padded: usize = self
            .host_list_size
            .iter()
            .map(|&s| (s as usize).next_multiple_of(crate::index::GROUP))
            .sum();
        let row_bytes = self.dim * self.dtype.size();
        let mut data = gpu.download(&self.data)?;
        data.truncate(padded * row_bytes);
        let mut ids = gpu.download(&self.ids)?;
        ids.truncate(padded);
        Ok(IvfIndex {
            metric,
            dtype: self.dtype,
            dim: self.dim,
            veclen: self.veclen,
            centers,
            list_offset,
            list_size: self.host_list_size.clone(),
            data,
            ids,
        })
    }

    /// Rows in each list.
    pub fn list_sizes(&self) -> &[i32] {
        &self.host_list_size
    }

    /// A flat dataset as lists of `chunk` consecutive rows, ids 0..rows.
    pub fn chunked(engine: &IvfGpu, rows: &Matrix, chunk: usize) -> Result<Self> {
        let n = rows.rows;
        let assignment: Vec<u32> = (0..n).map(|i| (i / chunk) as u32).collect();
        let n_lists = n.div_ceil(chunk).max(1);
        let ids: Vec<i64> = (0..n as i64).collect();
        let index = IvfIndex::from_assignment(
            Metric::L2,
            rows,
            &ids,
            vec![0.0; n_lists * rows.dim],
            &assignment,
        )?;
        Self::from_index(engine, &index)
    }

    /// Rows in all lists.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of lists.
    pub fn n_lists(&self) -> usize {
        self.n_lists
    }

    /// The element type of the rows.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }
}

/// The squared norms of the `padded_rows` rows of interleaved lists `data` (see
/// [`DeviceLists::row_norms`]).
fn row_norms(
    engine: &IvfGpu,
    data: &CudaSlice<u8>,
    dtype: DType,
    dim: usize,
    veclen: usize,
    padded_rows: usize,
) -> Result<CudaSlice<u32>> {
    let gpu = engine.gpu();
    let mut norms = gpu.alloc::<u32>(padded_rows.max(1))?;
    if padded_rows == 0 {
        return Ok(norms);
    }
    if data.len() < padded_rows * dim * dtype.size() || veclen == 0 || !dim.is_multiple_of(veclen) {
        return Err(Error::InvalidArgument(format!(
            "{} bytes of lists do not hold {padded_rows} rows of {dim} {} values in vectors \
             of {veclen}",
            data.len(),
            dtype.name()
        )));
    }
    let spec = row_norms_kernel(dtype);
    let kernel = engine
        .kernels
        .kernel(&spec.plan, spec.signature, spec.shared)?;
    let cfg = grid_stride(padded_rows);
    let (rows_i, dim_i, veclen_i) = (padded_rows as i64, dim as i32, veclen as i32);
    let integer_i = i32::from(dtype.size() == 1);
    let launch = Launch::on(gpu.stream(), &kernel, cfg)
        .buffer(data)
        .scalar(&rows_i)
        .scalar(&dim_i)
        .scalar(&veclen_i)
        .scalar(&integer_i)
        .buffer_mut(&mut norms);
    // SAFETY: thread r < padded_rows reads the dim values of padded row r, all within the
    // first padded_rows × dim values of data (checked above; veclen divides dim, so the
    // interleaved element of value d lies in its row's group), and writes norms[r]
    // (padded_rows allocated).
    unsafe { launch.run() }?;
    Ok(norms)
}

/// The list numbers ordered by size, longest first (ties by number). A block of the
/// list-major scan goes through its whole list, so its time grows with the list's length;
/// starting the longest first keeps a long list's blocks out of the last wave. For the
/// images bench set at 2 probes (`scripts/list-work.py`: 743 blocks, 2.8 waves of two an
/// SM, lists of 71 to 543 rows) a simulation of the block scheduler puts the scan at 1.44×
/// its evenly spread length in number order and 1.05× longest first; measured on the H200
/// (session 14, `1-wip-ab/`, same call): the images scan 155 → 129 µs (ncu), device QPS
/// images +2.7 to +12.2 % at batch 10,000 and up to +18 % at 1,000, the other sets +0.5
/// to +9.4 %.
fn longest_first(list_size: &[i32]) -> Vec<i32> {
    let mut order: Vec<i32> = (0..list_size.len() as i32).collect();
    order.sort_by_key(|&l| std::cmp::Reverse(list_size[l as usize]));
    order
}

/// The rows of lists of these sizes.
fn total_rows(list_size: &[i32]) -> usize {
    list_size.iter().map(|&s| s.max(0) as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_ordered_longest_first_and_ties_by_number() {
        assert_eq!(longest_first(&[3, 9, 0, 9, 4]), vec![1, 3, 4, 0, 2]);
        assert_eq!(longest_first(&[]), Vec::<i32>::new());
        let sizes: Vec<i32> = (0..100).map(|i| (i * 37) % 11).collect();
        let order = longest_first(&sizes);
        let mut seen = order.clone();
        seen.sort();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        assert!(order
            .windows(2)
            .all(|w| sizes[w[0] as usize] >= sizes[w[1] as usize]));
    }
}
