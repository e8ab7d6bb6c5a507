//! Building an index on the GPU: k-means on a training subsample (on the device), then
//! the assignment of every vector in its stored type (the coarse kernel), then the
//! interleaved lists (on the host, which keeps the index).

use std::time::Instant;

use ltokit::Result;

use crate::data::Matrix;
use crate::gpu::IvfGpu;
use crate::index::IvfIndex;
use crate::kmeans::{self, KMeansParams};
use crate::metric::Metric;

/// Where a build's time went, in seconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct BuildTimes {
    /// The strided training subsample, as f32 (normalised for cosine), on the host.
    pub training_set: f64,
    /// Balanced hierarchical k-means on the device.
    pub kmeans: f64,
    /// Every vector to its nearest centre, on the device (upload included).
    pub assignment: f64,
    /// The interleaved lists, on the host.
    pub layout: f64,
}

/// Builds an index of `base` with ids 0..n.
pub fn build(
    engine: &IvfGpu,
    base: &Matrix,
    metric: Metric,
    params: &KMeansParams,
) -> Result<IvfIndex> {
    build_timed(engine, base, metric, params).map(|(index, _)| index)
}

/// [`build`], with where the time went.
pub fn build_timed(
    engine: &IvfGpu,
    base: &Matrix,
    metric: Metric,
    params: &KMeansParams,
) -> Result<(IvfIndex, BuildTimes)> {
    let mut times = BuildTimes::default();
    let dim = base.dim;
    // The first search's kernels link on another core while the index is built.
    engine.prepare_first_search_in_background(base.dtype, dim, metric, params.n_lists);
    let t = Instant::now();
    let train = kmeans::training_set(base, params, metric);
    times.training_set = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let spherical = matches!(metric, Metric::Ip | Metric::Cosine);
    let centers = engine.train_balanced(&train, dim, params, spherical)?;
    times.kmeans = t.elapsed().as_secs_f64();
    // The assignment also checks every value on the device (a NaN or infinity is an
    // error naming its row), so the base is never scanned on the host.
    let t = Instant::now();
    let assignment = engine.assign_rows(base, &centers, metric)?;
    times.assignment = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    let index = IvfIndex::from_assignment(metric, base, &ids, centers, &assignment)?;
    times.layout = t.elapsed().as_secs_f64();
    Ok((index, times))
}
