//! # ltokit-ivf
//!
//! GPU IVF-Flat vector search whose interleaved scan kernel is assembled at run time by
//! ltokit from LTO-IR fragments: an entry kernel per top-k capacity, a distance fragment
//! per data type × vector width × metric, a metric fragment (score and reported
//! distance), and a filter fragment (none, bitset over ids, per-query bitmap).
//!
//! | module | job |
//! |---|---|
//! | [`data`] | element types, matrices, `.npy`/`.fvecs`/`.bvecs`/`.ivecs`, synthetic data |
//! | [`metric`] | metrics and filters |
//! | [`index`] | the interleaved list layout, building, adding, the index file |
//! | [`kmeans`] | balanced k-means with a pluggable assignment step |
//! | [`gpu`] | the GPU engine: coarse search, scan + merge, device-resident and host search, exact search, assignment |
//! | [`build`] | index building on the GPU |
//! | [`mod@reference`] | CPU references and recall |

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod build;
pub mod data;
pub mod gpu;
pub mod index;
pub mod kmeans;
pub mod metric;
pub mod reference;

pub use data::{DType, Matrix};
pub use index::IvfIndex;
pub use metric::{Filter, Metric};
