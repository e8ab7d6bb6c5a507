//! Building an index on the GPU: k-means on a training subsample, then assignment of
//! every vector, then the interleaved lists.

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
    let centers = kmeans::train(&train, dim, params, &mut |points, centers| {
        engine.assign(points, centers, dim)
    })?;
    let all = if metric == Metric::Cosine {
        let mut v = base.to_f32();
        for row in v.chunks_mut(dim) {
            let n = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                row.iter_mut().for_each(|x| *x /= n);
            }
        }
        v
    } else {
        base.to_f32()
    };
    let assignment = engine.assign(&all, &centers, dim)?;
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    IvfIndex::from_assignment(metric, base, &ids, centers, &assignment)
}
