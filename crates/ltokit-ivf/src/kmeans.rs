//! Balanced k-means for the coarse quantiser.
//!
//! Lloyd iterations on a strided training subsample, with the assignment step supplied
//! by the caller (the GPU in `ltokit ivf build`, the CPU reference in tests). Balancing,
//! as cuVS's balanced k-means intends: after each update, every list smaller than an
//! eighth of the average is re-seeded next to a random member of the largest list, which
//! splits it on the next assignment. Cosine clusters on normalised vectors.

use ltokit::{Error, Result};

use crate::data::{Matrix, Rng};
use crate::metric::Metric;

/// K-means settings (defaults as cuVS: 1024 lists, 20 iterations, half the data).
#[derive(Debug, Clone, Copy)]
pub struct KMeansParams {
    /// Number of lists (centres).
    pub n_lists: usize,
    /// Lloyd iterations.
    pub iters: usize,
    /// Fraction of the base used for training (strided subsample).
    pub train_fraction: f64,
    /// Seed of the initial centres and re-seeding.
    pub seed: u64,
}

impl Default for KMeansParams {
    fn default() -> Self {
        KMeansParams {
            n_lists: 1024,
            iters: 20,
            train_fraction: 0.5,
            seed: 0x1F1F,
        }
    }
}

/// Assigns each of `n` f32 points (`points`, row-major) to its nearest centre.
pub type AssignFn<'a> = dyn FnMut(&[f32], &[f32]) -> Result<Vec<u32>> + 'a;

/// The rows of a base of `rows` rows that k-means trains on: every `stride`-th, as many
/// as `params.train_fraction` asks (at least one per list).
pub fn training_rows(rows: usize, params: &KMeansParams) -> Vec<u32> {
    let n_train = ((rows as f64 * params.train_fraction).ceil() as usize)
        .clamp(params.n_lists.min(rows), rows);
    let stride = (rows / n_train.max(1)).max(1);
    (0..rows as u32).step_by(stride).take(n_train).collect()
}

/// The training points: the [`training_rows`] as f32 (normalised for cosine).
pub fn training_set(base: &Matrix, params: &KMeansParams, metric: Metric) -> Vec<f32> {
    let rows = training_rows(base.rows, params);
    let dim = base.dim.max(1);
    let mut out = vec![0f32; rows.len() * dim];
    // Converted on all cores: a few hundred MB for a million-row base.
    let threads = ltokit::parallel::threads(0, rows.len());
    let per_thread = rows.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (chunk, part) in rows
            .chunks(per_thread)
            .zip(out.chunks_mut(per_thread * dim))
        {
            scope.spawn(move || {
                for (&i, row) in chunk.iter().zip(part.chunks_mut(dim)) {
                    base.row_f32_into(i as usize, row);
                    if metric == Metric::Cosine {
                        normalise(row);
                    }
                }
            });
        }
    });
    out
}

fn normalise(row: &mut [f32]) {
    let n = row.iter().map(|v| v * v).sum::<f32>().sqrt();
    if n > 0.0 {
        row.iter_mut().for_each(|v| *v /= n);
    }
}

/// Trains `params.n_lists` centres on `train` (`dim`-dimensional rows).
pub fn train(
    train: &[f32],
    dim: usize,
    params: &KMeansParams,
    assign: &mut AssignFn<'_>,
) -> Result<Vec<f32>> {
    let n = train.len() / dim.max(1);
    let mut rng = Rng::new(params.seed);
    let mut centers = initial_centers(TrainRows::all(train, dim), params, &mut rng)?;
    for _ in 0..params.iters {
        let labels = assign(train, &centers)?;
        let mut sums = vec![0f64; params.n_lists * dim];
        let mut counts = vec![0usize; params.n_lists];
        for (i, &l) in labels.iter().enumerate() {
            let l = l as usize;
            counts[l] += 1;
            for (s, v) in sums[l * dim..(l + 1) * dim]
                .iter_mut()
                .zip(&train[i * dim..(i + 1) * dim])
            {
                *s += *v as f64;
            }
        }
        for l in 0..params.n_lists {
            if counts[l] > 0 {
                for j in 0..dim {
                    centers[l * dim + j] = (sums[l * dim + j] / counts[l] as f64) as f32;
                }
            }
        }
        // Balance: re-seed tiny lists beside a member of the largest list.
        let small = small_list_bound(n, params.n_lists);
        for l in 0..params.n_lists {
            if counts[l] < small {
                let largest = (0..params.n_lists).max_by_key(|&c| counts[c]).unwrap_or(0);
                reseed_beside(
                    &mut centers,
                    l,
                    largest,
                    train,
                    &labels,
                    &mut counts,
                    dim,
                    &mut rng,
                );
            }
        }
    }
    Ok(centers)
}

/// Training vectors: every row of a row-major set, or the rows an index picks (one
/// mesocluster's members), read in place rather than copied out.
#[derive(Debug, Clone, Copy)]
pub struct TrainRows<'a> {
    data: &'a [f32],
    dim: usize,
    index: Option<&'a [usize]>,
}

impl<'a> TrainRows<'a> {
    /// Every `dim`-wide row of `data`.
    pub fn all(data: &'a [f32], dim: usize) -> Self {
        TrainRows {
            data,
            dim,
            index: None,
        }
    }

    /// Rows `index[0]`, `index[1]`, … of `data`, in that order.
    pub fn subset(data: &'a [f32], dim: usize, index: &'a [usize]) -> Self {
        TrainRows {
            data,
            dim,
            index: Some(index),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match self.index {
            Some(index) => index.len(),
            None => self.data.len() / self.dim.max(1),
        }
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values per row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Row `i` (of this set's numbering).
    pub fn row(&self, i: usize) -> &'a [f32] {
        let at = self.index.map_or(i, |index| index[i]);
        &self.data[at * self.dim..(at + 1) * self.dim]
    }
}

/// The initial centres: `params.n_lists` distinct random training points.
pub fn initial_centers(
    train: TrainRows<'_>,
    params: &KMeansParams,
    rng: &mut Rng,
) -> Result<Vec<f32>> {
    let (n, dim) = (train.len(), train.dim());
    if params.n_lists == 0 || params.n_lists > n {
        return Err(Error::InvalidArgument(format!(
            "{} lists need at least as many training vectors; have {n}",
            params.n_lists
        )));
    }
    let mut picked = std::collections::HashSet::new();
    let mut centers = Vec::with_capacity(params.n_lists * dim);
    while picked.len() < params.n_lists {
        let i = rng.below(n);
        if picked.insert(i) {
            centers.extend_from_slice(train.row(i));
        }
    }
    Ok(centers)
}

/// Moves centre `l` next to a random training point of list `largest` (a tiny random
/// offset apart), so that the next assignment splits that list, and books half of its
/// members to `l`. Returns false when `largest` has no member to move beside.
#[allow(clippy::too_many_arguments)]
pub fn reseed_beside<L: Copy + TryInto<usize>>(
    centers: &mut [f32],
    l: usize,
    largest: usize,
    train: &[f32],
    labels: &[L],
    sizes: &mut [usize],
    dim: usize,
    rng: &mut Rng,
) -> bool {
    let members: Vec<usize> = labels
        .iter()
        .enumerate()
        .filter(|(_, &x)| x.try_into().ok() == Some(largest))
        .map(|(i, _)| i)
        .collect();
    let Some(&i) = members.get(rng.below(members.len())) else {
        return false;
    };
    for j in 0..dim {
        centers[l * dim + j] = train[i * dim + j] + 1e-3 * rng.normal();
    }
    let moved = sizes[largest] / 2;
    sizes[largest] -= moved;
    sizes[l] += moved;
    true
}

/// Lists at most this fraction of the mean size are moved by [`adjust_small_lists`].
pub const ADJUST_THRESHOLD: f64 = 0.25;
/// The weight of the large list's centre against the drawn point when a small list moves.
const ADJUST_CENTER_WEIGHT: f32 = 7.0;

/// The balancing step of cuVS's balanced k-means, applied between Lloyd iterations: every
/// list of at most [`ADJUST_THRESHOLD`] × the mean size moves next to the centre of a
/// list of at least the mean size — `(w · c[label(i)] + x_i) / (w + 1)` with `w =
/// min(size, 7)` — where `i` is a point drawn in a fixed stride, kept only if its list is
/// large. Points are drawn where the data is, so centres move to where the data (and the
/// queries) are dense, splitting the large lists there on the next assignment; plain
/// Lloyd instead keeps a centre on every small, far-away cluster. Returns whether any
/// centre moved. `centers` and `labels` are those of the assignment that gave `sizes`.
pub fn adjust_small_lists<L: Copy + TryInto<usize>>(
    centers: &mut [f32],
    sizes: &[usize],
    labels: &[L],
    train: TrainRows<'_>,
    rng: &mut Rng,
) -> bool {
    let dim = train.dim();
    let k = sizes.len();
    let n = labels.len();
    let mean = (n / k.max(1)).max(1);
    let threshold = mean as f64 * ADJUST_THRESHOLD;
    if n == 0 || !sizes.iter().any(|&c| c as f64 <= threshold) {
        return false;
    }
    let label = |i: usize| labels[i].try_into().ok().filter(|&l| l < k);
    if !(0..n).any(|i| label(i).is_some_and(|l| sizes[l] >= mean)) {
        return false;
    }
    let old = centers.to_vec();
    // A stride coprime with n visits every point.
    const STRIDES: [usize; 8] = [29, 71, 113, 173, 229, 281, 349, 409];
    let stride = STRIDES
        .iter()
        .copied()
        .cycle()
        .skip(rng.below(STRIDES.len()))
        .take(STRIDES.len())
        .find(|s| !n.is_multiple_of(*s))
        .unwrap_or(1);
    let mut at = rng.below(n);
    let mut moved = false;
    for l in 0..k {
        if sizes[l] as f64 > threshold {
            continue;
        }
        let (i, big) = loop {
            at = (at + stride) % n;
            if let Some(big) = label(at).filter(|&b| sizes[b] >= mean) {
                break (at, big);
            }
        };
        let w = (sizes[l] as f32).min(ADJUST_CENTER_WEIGHT);
        let x = train.row(i);
        for j in 0..dim {
            centers[l * dim + j] = (w * old[big * dim + j] + x[j]) / (w + 1.0);
        }
        moved = true;
    }
    moved
}

/// Lists smaller than this after an update are re-seeded (an eighth of the average).
pub fn small_list_bound(n_points: usize, n_lists: usize) -> usize {
    (n_points / n_lists.max(1) / 8).max(1)
}

/// The CPU assignment (reference; O(points × centres × dim)).
pub fn assign_cpu(points: &[f32], centers: &[f32], dim: usize) -> Vec<u32> {
    points
        .chunks(dim)
        .map(|p| {
            let mut best = (f32::INFINITY, 0u32);
            for (l, c) in centers.chunks(dim).enumerate() {
                let d: f32 = p.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
                if d < best.0 {
                    best = (d, l as u32);
                }
            }
            best.1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_lists_move_next_to_large_ones() {
        // Two lists: 0 holds 9 points near (10, 10), 1 holds one point near (0, 0).
        let dim = 2;
        let mut train = Vec::new();
        for i in 0..9 {
            train.extend([10.0 + i as f32 * 0.01, 10.0]);
        }
        train.extend([0.0, 0.0]);
        let labels: Vec<u32> = [0u32; 9].into_iter().chain([1]).collect();
        let sizes = [9usize, 1];
        let mut centers = vec![10.04, 10.0, 0.0, 0.0];
        let mut rng = Rng::new(3);
        assert!(adjust_small_lists(
            &mut centers,
            &sizes,
            &labels,
            TrainRows::all(&train, dim),
            &mut rng
        ));
        // List 1 (size 1, weight 1) moved halfway between list 0's centre and one of its
        // points; list 0 stayed.
        assert_eq!(&centers[..2], &[10.04, 10.0]);
        assert!(
            (centers[2] - 10.0).abs() < 0.1 && (centers[3] - 10.0).abs() < 1e-6,
            "{centers:?}"
        );
        // Balanced lists: nothing moves.
        let mut same = vec![0.0, 0.0, 1.0, 1.0];
        let before = same.clone();
        assert!(!adjust_small_lists(
            &mut same,
            &[5, 5],
            &[0u32, 0, 0, 0, 0, 1, 1, 1, 1, 1],
            TrainRows::all(&[0.0; 20], dim),
            &mut rng
        ));
        assert_eq!(same, before);
    }
    use crate::data::{synthetic, DType};

    #[test]
    fn finds_separated_clusters_and_keeps_lists_balanced() {
        let base = synthetic(2000, 8, 8, DType::F32, 5);
        let params = KMeansParams {
            n_lists: 16,
            iters: 10,
            train_fraction: 0.5,
            seed: 1,
        };
        let t = training_set(&base, &params, Metric::L2);
        assert_eq!(t.len(), 1000 * 8);
        let centers = train(&t, 8, &params, &mut |p, c| Ok(assign_cpu(p, c, 8))).unwrap();
        let labels = assign_cpu(&base.to_f32(), &centers, 8);
        let mut counts = vec![0usize; 16];
        labels.iter().for_each(|&l| counts[l as usize] += 1);
        assert!(counts.iter().all(|&c| c > 0), "no empty list: {counts:?}");
        // Quantisation error well below the data's spread.
        let err: f32 = base
            .to_f32()
            .chunks(8)
            .zip(&labels)
            .map(|(p, &l)| {
                p.iter()
                    .zip(&centers[l as usize * 8..][..8])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f32>()
            })
            .sum::<f32>()
            / 2000.0;
        assert!(err < 8.0 * 0.25 * 0.25 * 1.5, "mean squared error {err}");
    }

    #[test]
    fn too_many_lists_is_an_error() {
        assert!(train(
            &[0.0; 8],
            2,
            &KMeansParams {
                n_lists: 5,
                ..Default::default()
            },
            &mut |p, c| Ok(assign_cpu(p, c, 2))
        )
        .is_err());
    }
}
