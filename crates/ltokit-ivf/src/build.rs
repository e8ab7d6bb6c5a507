//! Building an index on the GPU: k-means on a training subsample (on the device), then
//! the assignment of every vector in its stored type (the coarse kernel), then the
//! interleaved lists — on the host for a host index ([`build`]), on the device for an
//! index that stays there ([`build_on_gpu`]: the base goes up once and the lists are laid
//! out from it, nothing comes back but the labels).

use std::time::Instant;

use ltokit::Result;

use crate::data::Matrix;
use crate::gpu::{DeviceLists, GpuIndex, IvfGpu};
use crate::index::{nearest_first_order, IvfIndex, Placement};
use crate::kmeans::{self, KMeansParams};
use crate::metric::Metric;

/// Where a build's time went, in seconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct BuildTimes {
    /// The base's upload ([`build_on_gpu`] only; [`build`] counts it in `assignment`).
    pub upload: f64,
    /// The strided training subsample, as f32 (normalised for cosine), on the host
    /// ([`build_on_gpu`]: beside the upload).
    pub training_set: f64,
    /// Balanced hierarchical k-means on the device.
    pub kmeans: f64,
    /// Every vector to its nearest centre, on the device ([`build`]: its upload included).
    pub assignment: f64,
    /// The interleaved lists (on the host, or on the device for [`build_on_gpu`]).
    pub layout: f64,
}

impl BuildTimes {
    /// Everything but the upload: the build of a base already on the device, as cuVS
    /// times its own.
    pub fn on_device(&self) -> f64 {
        self.training_set + self.kmeans + self.assignment + self.layout
    }
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
    let order = row_order(base, &centers, &assignment, metric, params.n_lists)?;
    let index = IvfIndex::from_assignment_order(metric, base, &ids, centers, &assignment, &order)?;
    times.layout = t.elapsed().as_secs_f64();
    Ok((index, times))
}

/// The order a build places rows in their lists: each list's rows nearest its centre
/// first ([`nearest_first_order`]), scored on the host by `metric` over every core (in f32:
/// [`Metric::score_f32`]). 1M × 128 i8 rows over 1,024 lists on dev's two cores
/// (`cargo bench -p ltokit-ivf --bench row_order`, fastest of five, three runs): 20.3–20.5
/// ms, against 58.8–64.2 ms with f64 scores and per-list row vectors (session 38; with those,
/// builds on the H100 took 0.04–0.09 s longer than in base order).
pub fn row_order(
    base: &Matrix,
    centers: &[f32],
    assignment: &[u32],
    metric: Metric,
    n_lists: usize,
) -> Result<Vec<u32>> {
    let dim = base.dim;
    if centers.len() != n_lists * dim || assignment.len() != base.rows {
        return Err(ltokit::Error::InvalidArgument(format!(
            "{} centre values, {} assignments for {n_lists} lists of {} rows × {dim}",
            centers.len(),
            assignment.len(),
            base.rows
        )));
    }
    let mut to_centre = vec![0f32; base.rows];
    let threads = ltokit::parallel::threads(0, base.rows);
    let per_thread = base.rows.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (part, scores) in to_centre.chunks_mut(per_thread).enumerate() {
            scope.spawn(move || {
                let mut row = vec![0f32; dim];
                for (j, score) in scores.iter_mut().enumerate() {
                    let r = part * per_thread + j;
                    base.row_f32_into(r, &mut row);
                    // A list number past the centres scores as the farthest: the
                    // placement names it as an error.
                    let list = assignment[r] as usize;
                    *score = centers
                        .get(list * dim..(list + 1) * dim)
                        .map_or(f32::INFINITY, |c| metric.score_f32(c, &row));
                }
            });
        }
    });
    nearest_first_order(assignment, n_lists, &to_centre)
}

/// Builds an index of `base` (ids 0..n) that stays on the device: the base is uploaded
/// once (while the training subsample is taken on the host), k-means trains on the
/// device (its training rows gathered there from the upload, as f32), every row is
/// assigned there, and the lists are laid out there from the uploaded rows — the same
/// lists as [`build`] followed by [`GpuIndex::upload`], without the host layout or the
/// second upload. [`GpuIndex::to_host`] gives the host index (to save it).
pub fn build_on_gpu(
    engine: &IvfGpu,
    base: &Matrix,
    metric: Metric,
    params: &KMeansParams,
) -> Result<(GpuIndex, BuildTimes)> {
    let mut times = BuildTimes::default();
    let dim = base.dim;
    engine.prepare_build_kernels_in_background(base.dtype, dim, metric, params.n_lists);
    let (uploaded, training) = std::thread::scope(|scope| {
        let training = scope.spawn(|| {
            let t = Instant::now();
            (kmeans::training_set(base, params, metric), t.elapsed())
        });
        let t = Instant::now();
        let uploaded = engine.gpu().upload(&base.bytes);
        times.upload = t.elapsed().as_secs_f64();
        let training = training.join();
        (uploaded, training)
    });
    let (train, took) =
        training.map_err(|_| ltokit::Error::Driver("the training-set thread panicked".into()))?;
    times.training_set = took.as_secs_f64();
    // The base and its lists are on the device together for a moment: about twice the
    // base's bytes.
    let uploaded = uploaded.map_err(|e| {
        ltokit::Error::Driver(format!(
            "{e}; a device build holds the base ({} bytes) and its lists on the GPU at once: \
             build a smaller base, or lay the lists out on the host with build::build",
            base.bytes.len()
        ))
    })?;
    let rows = uploaded.slice(0..base.bytes.len());
    let t = Instant::now();
    let spherical = matches!(metric, Metric::Ip | Metric::Cosine);
    // The training rows on the device come from the upload (the host's copy is what the
    // initial centres and the balancing read).
    let order = kmeans::training_rows(base.rows, params);
    let points =
        engine.gather_rows_f32(&rows, base.dtype, dim, &order, metric == Metric::Cosine)?;
    let centers = engine.train_balanced_on(
        &points.slice(0..train.len()),
        &train,
        dim,
        params,
        spherical,
    )?;
    drop(points);
    drop(train);
    times.kmeans = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let assignment = engine.assign_uploaded(&rows, base.dtype, dim, &centers, metric)?;
    times.assignment = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let order = row_order(base, &centers, &assignment, metric, params.n_lists)?;
    let placement = Placement::of_order(&assignment, params.n_lists, &order)?;
    let ids: Vec<i64> = (0..base.rows as i64).collect();
    let lists = DeviceLists::lay_out(engine, &rows, base.dtype, dim, &placement, &ids)?;
    drop(uploaded);
    let index = GpuIndex::from_lists(engine, metric, lists, &centers)?;
    engine.gpu().synchronize()?;
    times.layout = t.elapsed().as_secs_f64();
    Ok((index, times))
}
