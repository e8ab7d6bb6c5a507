//! k-means on the device: the training points uploaded once or gathered from a base on
//! the device (as each mesocluster's members are, kernels/train_rows.cu), the assignment by the coarse
//! kernel, the centre update by atomics (kernels/kmeans.cu), and cuVS's balancing step on
//! the host (`kmeans::adjust_small_lists`; the labels come back only when a list is small
//! enough to move).
//! Spherical k-means (centres scaled to unit length, assignment by inner product) for the
//! inner-product and cosine metrics.

use ltokit::launch::{CudaSlice, CudaView, DeviceElem, Elem, Extent, Launch, LaunchConfig, Param};
use ltokit::{Error, Result};

use super::coarse::CoarseQueries;
use super::{warp_per_row, DeviceCenters, IvfGpu, KernelSpec};
use crate::data::{DType, Matrix, Rng};
use crate::kmeans::{
    adjust_small_lists, initial_centers, KMeansParams, TrainRows, ADJUST_THRESHOLD,
};
use crate::metric::Metric;

const SUM_SIGNATURE: &[Param] = &[
    Param::Buffer(Elem::F32, Extent::Any),    // points
    Param::Buffer(Elem::I64, Extent::Any),    // labels
    Param::I32,                               // n
    Param::I32,                               // dim
    Param::BufferMut(Elem::F32, Extent::Any), // sums
    Param::BufferMut(Elem::U32, Extent::Any), // counts
];

const TRAIN_ROWS_SIGNATURE: &[Param] = &[
    Param::Ptr,                               // rows, as stored (any buffer)
    Param::Buffer(Elem::U32, Extent::Any),    // order
    Param::I32,                               // rows to gather
    Param::I32,                               // dim
    Param::I32,                               // normalise
    Param::BufferMut(Elem::F32, Extent::Any), // training rows
];

/// The kernel that gathers rows of a type as f32 on the device ([`IvfGpu::gather_rows_f32`]).
pub(crate) fn train_rows_kernel(dtype: DType) -> KernelSpec {
    KernelSpec {
        plan: format!("train_rows_{}", dtype.name()),
        signature: TRAIN_ROWS_SIGNATURE,
        shared: 0,
    }
}

const DIVIDE_SIGNATURE: &[Param] = &[
    Param::BufferMut(Elem::F32, Extent::Any), // centres
    Param::BufferMut(Elem::F32, Extent::Any), // norms
    Param::Buffer(Elem::F32, Extent::Any),    // sums
    Param::Buffer(Elem::U32, Extent::Any),    // counts
    Param::I32,                               // n_centers
    Param::I32,                               // dim
    Param::I32,                               // normalise
];

impl IvfGpu {
    /// Trains `params.n_lists` centres on `train` (`dim`-wide f32 rows; normalised
    /// already for cosine) with `params.iters` Lloyd iterations on the device; spherical
    /// (unit-length centres, assignment by inner product) when `spherical`.
    pub fn train_kmeans(
        &self,
        train: &[f32],
        dim: usize,
        params: &KMeansParams,
        spherical: bool,
    ) -> Result<Vec<f32>> {
        let points = self.gpu.upload(train)?;
        self.kmeans_on(
            &points.slice(0..train.len()),
            TrainRows::all(train, dim),
            params,
            spherical,
        )
    }

    /// Balanced hierarchical k-means, as cuVS builds its lists: `√n_lists` mesoclusters
    /// first, then each mesocluster's own centres in proportion to its share of the
    /// points (so that dense regions get more, smaller lists), then a few iterations over
    /// all centres together. Falls back to plain k-means below 64 lists. The training
    /// set goes to the device once; each mesocluster's members are gathered there next
    /// to each other, so that its clustering reads one contiguous slice.
    pub fn train_balanced(
        &self,
        train: &[f32],
        dim: usize,
        params: &KMeansParams,
        spherical: bool,
    ) -> Result<Vec<f32>> {
        let uploaded = self.gpu.upload(train)?;
        self.train_balanced_on(
            &uploaded.slice(0..train.len()),
            train,
            dim,
            params,
            spherical,
        )
    }

    /// [`IvfGpu::train_balanced`] with the training points already on the device:
    /// `points` holds the values of `train` (which the initial centres and the balancing
    /// read on the host) in the same order.
    pub fn train_balanced_on(
        &self,
        points: &CudaView<'_, f32>,
        train: &[f32],
        dim: usize,
        params: &KMeansParams,
        spherical: bool,
    ) -> Result<Vec<f32>> {
        let n = train.len() / dim.max(1);
        let k = params.n_lists;
        if points.len() != train.len() {
            return Err(Error::InvalidArgument(format!(
                "{} training values on the device, {} on the host",
                points.len(),
                train.len()
            )));
        }
        let rows = TrainRows::all(train, dim);
        if k < 64 || n < 4 * k {
            return self.kmeans_on(points, rows, params, spherical);
        }
        let started = std::time::Instant::now();
        let n_meso = ((k as f64).sqrt().round() as usize).clamp(2, k);
        let meso = self.kmeans_on(
            points,
            rows,
            &KMeansParams {
                n_lists: n_meso,
                iters: params.iters.div_ceil(2).max(1),
                ..*params
            },
            spherical,
        )?;
        let metric = if spherical { Metric::Ip } else { Metric::L2 };
        let labels = self.assign_uploaded(points, DType::F32, dim, &meso, metric)?;
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_meso];
        for (i, &l) in labels.iter().enumerate() {
            members[l as usize].push(i);
        }
        let sizes: Vec<usize> = members.iter().map(Vec::len).collect();
        let fine = proportional_split(k, &sizes);
        let meso_done = started.elapsed();
        let order: Vec<u32> = members.iter().flatten().map(|&i| i as u32).collect();
        let grouped = self.gather_rows_f32(points, DType::F32, dim, &order, false)?;
        let mut rng = Rng::new(params.seed ^ 0xBA1A);
        let mut centers = Vec::with_capacity(k * dim);
        let mut first = 0;
        for (m, index) in members.iter().enumerate() {
            let (begin, end) = (first, first + index.len());
            first = end;
            if fine[m] == 0 {
                continue;
            }
            let sub = KMeansParams {
                n_lists: fine[m],
                iters: params.iters.div_ceil(2).max(1),
                seed: rng.next_u64(),
                ..*params
            };
            centers.extend(self.kmeans_on(
                &grouped.slice(begin * dim..end * dim),
                TrainRows::subset(train, dim, index),
                &sub,
                spherical,
            )?);
        }
        let fine_done = started.elapsed();
        let centers = self.refine_kmeans(
            points,
            rows,
            centers,
            params.iters.div_ceil(4).max(1),
            spherical,
            &mut rng,
        )?;
        tracing::debug!(
            upload_and_mesoclusters_ms = meso_done.as_secs_f64() * 1e3,
            fine_ms = (fine_done - meso_done).as_secs_f64() * 1e3,
            refine_ms = (started.elapsed() - fine_done).as_secs_f64() * 1e3,
            "balanced k-means of {n} rows into {k} lists"
        );
        Ok(centers)
    }

    /// k-means from `params.n_lists` random rows of `rows`, whose values `points` holds
    /// on the device in the same order.
    fn kmeans_on(
        &self,
        points: &CudaView<'_, f32>,
        rows: TrainRows<'_>,
        params: &KMeansParams,
        spherical: bool,
    ) -> Result<Vec<f32>> {
        let mut rng = Rng::new(params.seed);
        let centers = initial_centers(rows, params, &mut rng)?;
        self.refine_kmeans(points, rows, centers, params.iters, spherical, &mut rng)
    }

    /// Rows `order[0]`, `order[1]`, … of `rows` (on the device: rows of `dim` values of
    /// `dtype`, as stored, in a buffer of any element type) gathered as f32 into a new
    /// device buffer, each scaled to unit length when `normalise` — k-means' training rows
    /// from a base already on the device (what [`crate::kmeans::training_set`] makes on
    /// the host, without sending it up), or a mesocluster's members next to each other.
    pub fn gather_rows_f32<T: DeviceElem>(
        &self,
        rows: &CudaView<'_, T>,
        dtype: DType,
        dim: usize,
        order: &[u32],
        normalise: bool,
    ) -> Result<CudaSlice<f32>> {
        let gpu = &self.gpu;
        let n_rows = rows.len() * std::mem::size_of::<T>() / (dim * dtype.size()).max(1);
        if let Some(&bad) = order.iter().find(|&&i| i as usize >= n_rows) {
            return Err(Error::InvalidArgument(format!(
                "row {bad} to gather from {n_rows} rows"
            )));
        }
        let mut out = gpu.alloc::<f32>((order.len() * dim).max(1))?;
        if order.is_empty() {
            return Ok(out);
        }
        let order_dev = gpu.upload(order)?;
        let spec = train_rows_kernel(dtype);
        let kernel = self
            .kernels
            .kernel(&spec.plan, spec.signature, spec.shared)?;
        let (n_i, dim_i, norm_i) = (order.len() as i32, dim as i32, i32::from(normalise));
        let launch = Launch::on(gpu.stream(), &kernel, warp_per_row(order.len()))
            .view(rows)
            .buffer(&order_dev)
            .scalar(&n_i)
            .scalar(&dim_i)
            .scalar(&norm_i)
            .buffer_mut(&mut out);
        // SAFETY: row r of `out` (order.len() rows of dim f32) gets the dim values of row
        // order[r] of `rows`, each checked above to be below its row count in `dtype`,
        // the type the plan reads.
        unsafe { launch.run() }?;
        Ok(out)
    }

    /// Lloyd iterations on the device from the given centres, with balancing, over the
    /// points of `points` (the values of `rows`, which the balancing reads on the host).
    fn refine_kmeans(
        &self,
        points: &CudaView<'_, f32>,
        rows: TrainRows<'_>,
        mut centers: Vec<f32>,
        iters: usize,
        spherical: bool,
        rng: &mut Rng,
    ) -> Result<Vec<f32>> {
        let (n, dim) = (rows.len(), rows.dim());
        let k = centers.len() / dim.max(1);
        if points.len() < n * dim {
            return Err(Error::InvalidArgument(format!(
                "{} point values on the device for {n} rows of {dim}",
                points.len()
            )));
        }
        if spherical {
            centers.chunks_mut(dim).for_each(normalise);
        }
        let metric = if spherical { Metric::Ip } else { Metric::L2 };
        let gpu = &self.gpu;
        let mut labels = gpu.alloc::<i64>(n)?;
        let mut bad = gpu.upload(&[0i32])?;
        let mut sums = gpu.alloc::<f32>(k * dim)?;
        let mut counts = gpu.alloc::<u32>(k)?;
        let mut dev = DeviceCenters::upload(gpu, &centers, dim, metric, DType::F32)?;
        let sum = self.kernels.kernel("kmeans_sum", SUM_SIGNATURE, 0)?;
        let divide = self.kernels.kernel("kmeans_divide", DIVIDE_SIGNATURE, 0)?;
        let (n_i, dim_i, k_i, norm_i) = (n as i32, dim as i32, k as i32, i32::from(spherical));
        for it in 0..iters {
            let q = CoarseQueries {
                rows: &points.slice(0..n * dim),
                dtype: DType::F32,
                n,
                base: 0,
                planned: n,
            };
            self.coarse(&dev, &q, 1, &mut labels.slice_mut(0..n), &mut bad, None)?;
            gpu.clear(&mut sums)?;
            gpu.clear(&mut counts)?;
            let launch = Launch::on(gpu.stream(), &sum, warp_per_row(n))
                .view(points)
                .buffer(&labels)
                .scalar(&n_i)
                .scalar(&dim_i)
                .buffer_mut(&mut sums)
                .buffer_mut(&mut counts);
            // SAFETY: reads n points of dim values and n labels, each in 0..k (written by
            // the coarse search over k centres); adds into k × dim sums and k counts.
            unsafe { launch.run() }?;
            let launch = Launch::on(
                gpu.stream(),
                &divide,
                LaunchConfig {
                    grid_dim: (k as u32, 1, 1),
                    block_dim: (128, 1, 1),
                    shared_mem_bytes: 0,
                },
            )
            .buffer_mut(&mut dev.centers)
            .buffer_mut(&mut dev.norms)
            .buffer(&sums)
            .buffer(&counts)
            .scalar(&k_i)
            .scalar(&dim_i)
            .scalar(&norm_i);
            // SAFETY: block c reads and writes row c of k × dim centres, sums, and entry c
            // of k norms and counts; the grid has k blocks.
            unsafe { launch.run() }?;
            // Balance as cuVS's balanced k-means does: lists of at most a quarter of the
            // mean move next to large ones (not after the last update, whose centres are
            // the result). Queries concentrate where the data does, so a large list there
            // costs every query that probes it.
            if it + 1 < iters {
                let sizes: Vec<usize> =
                    gpu.download(&counts)?.iter().map(|&c| c as usize).collect();
                let threshold = (n / k).max(1) as f64 * ADJUST_THRESHOLD;
                if sizes.iter().any(|&c| c as f64 <= threshold) {
                    centers = gpu.download(&dev.centers)?;
                    let labels_host = gpu.download(&labels)?;
                    if adjust_small_lists(&mut centers, &sizes, &labels_host, rows, rng) {
                        if spherical {
                            centers.chunks_mut(dim).for_each(normalise);
                        }
                        dev = DeviceCenters::upload(gpu, &centers, dim, metric, DType::F32)?;
                    }
                }
            }
        }
        gpu.download(&dev.centers)
    }

    /// The nearest centre of every row of `base` (in its stored type), by `metric`'s
    /// coarse score: the final assignment of an index build. A NaN or infinite value is
    /// an error naming its row (found on the device).
    pub fn assign_rows(&self, base: &Matrix, centers: &[f32], metric: Metric) -> Result<Vec<u32>> {
        let rows = self.gpu.upload(&base.bytes)?;
        self.assign_uploaded(
            &rows.slice(0..base.bytes.len()),
            base.dtype,
            base.dim,
            centers,
            metric,
        )
    }

    /// [`IvfGpu::assign_rows`] of rows already on the device (`dim` values of `dtype`
    /// each, as stored).
    pub(crate) fn assign_uploaded<T: DeviceElem>(
        &self,
        rows: &CudaView<'_, T>,
        dtype: DType,
        dim: usize,
        centers: &[f32],
        metric: Metric,
    ) -> Result<Vec<u32>> {
        let metric = match metric {
            Metric::L2Sqrt => Metric::L2,
            m => m,
        };
        let dev = DeviceCenters::upload(&self.gpu, centers, dim, metric, dtype)?;
        let n = rows.len() * std::mem::size_of::<T>() / (dim * dtype.size()).max(1);
        let labels = self.coarse_to_host(&dev, rows, dtype, n, 1)?;
        Ok(labels.iter().map(|&l| l.max(0) as u32).collect())
    }
}

/// Splits `total` among groups in proportion to `sizes` (largest remainders), each
/// non-empty group getting at least one and none more than its size.
fn proportional_split(total: usize, sizes: &[usize]) -> Vec<usize> {
    let n: usize = sizes.iter().sum();
    let mut out: Vec<usize> = sizes
        .iter()
        .map(|&s| {
            if s == 0 {
                0
            } else {
                (total * s / n.max(1)).clamp(1, s)
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut given: usize = out.iter().sum();
    // Hand out what is left, largest groups first; take back from them if too many.
    'grow: while given < total {
        let before = given;
        for &i in &order {
            if given == total {
                break 'grow;
            }
            if out[i] < sizes[i] {
                out[i] += 1;
                given += 1;
            }
        }
        if given == before {
            break;
        }
    }
    'shrink: while given > total {
        let before = given;
        for &i in &order {
            if given == total {
                break 'shrink;
            }
            if out[i] > 1 {
                out[i] -= 1;
                given -= 1;
            }
        }
        if given == before {
            break;
        }
    }
    out
}

fn normalise(row: &mut [f32]) {
    let n = row.iter().map(|v| v * v).sum::<f32>().sqrt();
    if n > 0.0 {
        row.iter_mut().for_each(|v| *v /= n);
    }
}

#[cfg(test)]
mod tests {
    use super::proportional_split;

    #[test]
    fn splits_sum_to_the_total_in_proportion() {
        let sizes = [500, 300, 150, 50, 0];
        let out = proportional_split(100, &sizes);
        assert_eq!(out.iter().sum::<usize>(), 100);
        assert_eq!(out[4], 0);
        assert!(out[0] >= 49 && out[0] <= 51, "{out:?}");
        assert!(out[3] >= 4 && out[3] <= 6, "{out:?}");
        // At least one for a non-empty group, never more than its own size.
        assert_eq!(proportional_split(10, &[3, 100]), vec![1, 9]);
        assert_eq!(proportional_split(5, &[1, 100]), vec![1, 4]);
        assert_eq!(proportional_split(40, &[2, 30]), vec![2, 30]);
    }
}
