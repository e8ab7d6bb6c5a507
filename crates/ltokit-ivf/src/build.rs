//! Building an index on the GPU: k-means on a training subsample (on the device), then
//! the assignment of every vector in its stored type (the coarse kernel), then the
//! interleaved lists (on the host, which keeps the index).

use ltokit::Result;

use crate::data::Matrix;
use crate::gpu::IvfGpu;
use crate::index::IvfIndex;
use crate::kmeans::{self, KMeansParams};
use crate::metric::Metric;

/// Builds an index of `base` with ids 0..n.
pub fn build(
    engine: &IvfGpu,
    base: &Matrix,
    metric: Metric,
    params: &KMeansParams,
) -> Result<IvfIndex> {
    base.check_finite("base vectors")?;
    let dim = base.dim;
    let train = kmeans::training_set(base, params, metric);
    let spherical = matches!(metric, Metric::Ip | Metric::Cosine);
    let centers = engine.train_kmeans(&train, dim, params, spherical)?;
    let assignment = engine.assign_rows(base, &centers, metric)?;
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    IvfIndex::from_assignment(metric, base, &ids, centers, &assignment)
}
