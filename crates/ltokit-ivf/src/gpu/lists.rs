//! Lists on the device in the interleaved layout (see [`crate::index`]).

use ltokit::launch::{CudaSlice, Gpu};
use ltokit::Result;

use super::nonempty;
use crate::data::{DType, Matrix};
use crate::index::IvfIndex;
use crate::metric::Metric;

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
}

impl DeviceLists {
    /// Uploads an index's lists.
    pub fn from_index(gpu: &Gpu, index: &IvfIndex) -> Result<Self> {
        Ok(DeviceLists {
            dtype: index.dtype,
            dim: index.dim,
            veclen: index.veclen,
            n_lists: index.n_lists(),
            data: gpu.upload(&nonempty(&index.data))?,
            list_offset: gpu.upload(&index.list_offset)?,
            list_size: gpu.upload(&index.list_size)?,
            ids: gpu.upload(&nonempty(&index.ids))?,
        })
    }

    /// A flat dataset as lists of `chunk` consecutive rows, ids 0..rows.
    pub fn chunked(gpu: &Gpu, rows: &Matrix, chunk: usize) -> Result<Self> {
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
        Self::from_index(gpu, &index)
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
