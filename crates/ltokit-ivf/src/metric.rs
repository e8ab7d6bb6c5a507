//! Distance metrics and filters.

use ltokit::{Error, Result};

/// How vectors are compared. Results are ordered best first: smallest distance, or
/// largest inner product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Squared Euclidean distance.
    L2,
    /// Euclidean distance.
    L2Sqrt,
    /// Inner product (larger is better; reported as is).
    Ip,
    /// Cosine distance, `1 - cos`.
    Cosine,
}

impl Metric {
    /// Name in plan names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::L2 => "l2",
            Metric::L2Sqrt => "l2sqrt",
            Metric::Ip => "ip",
            Metric::Cosine => "cosine",
        }
    }

    /// All metrics.
    pub const ALL: [Metric; 4] = [Metric::L2, Metric::L2Sqrt, Metric::Ip, Metric::Cosine];

    /// The score (smaller is better) of `x` for query `q`, in f64 (the CPU reference).
    pub fn score(self, q: &[f32], x: &[f32]) -> f64 {
        match self {
            Metric::L2 | Metric::L2Sqrt => q
                .iter()
                .zip(x)
                .map(|(a, b)| (*a as f64 - *b as f64).powi(2))
                .sum(),
            Metric::Ip => -q
                .iter()
                .zip(x)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum::<f64>(),
            Metric::Cosine => {
                let dot: f64 = q.iter().zip(x).map(|(a, b)| *a as f64 * *b as f64).sum();
                let nq: f64 = q.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
                let nx: f64 = x.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
                if nq * nx > 0.0 {
                    1.0 - dot / (nq * nx)
                } else {
                    1.0
                }
            }
        }
    }

    /// [`Metric::score`] in f32 over eight partial sums, which vectorise: for orderings
    /// that need no f64 (a build's rows nearest their centre first), where the f64 sum in
    /// order took 45 of the 58 ms to order 1M × 128 i8 rows on dev's two cores.
    pub fn score_f32(self, q: &[f32], x: &[f32]) -> f32 {
        /// Eight partial sums of `term` over the pairs of `q` and `x`, then their total.
        fn sum8(q: &[f32], x: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
            let mut acc = [0f32; 8];
            let (qc, xc) = (q.chunks_exact(8), x.chunks_exact(8));
            let tail: f32 = qc
                .remainder()
                .iter()
                .zip(xc.remainder())
                .map(|(a, b)| term(*a, *b))
                .sum();
            for (a, b) in qc.zip(xc) {
                for i in 0..8 {
                    acc[i] += term(a[i], b[i]);
                }
            }
            acc.iter().sum::<f32>() + tail
        }
        match self {
            Metric::L2 | Metric::L2Sqrt => sum8(q, x, |a, b| (a - b) * (a - b)),
            Metric::Ip => -sum8(q, x, |a, b| a * b),
            Metric::Cosine => {
                let dot = sum8(q, x, |a, b| a * b);
                let nq = sum8(q, q, |a, _| a * a).sqrt();
                let nx = sum8(x, x, |a, _| a * a).sqrt();
                if nq * nx > 0.0 {
                    1.0 - dot / (nq * nx)
                } else {
                    1.0
                }
            }
        }
    }

    /// A score as reported to the caller.
    pub fn report(self, score: f64) -> f64 {
        match self {
            Metric::L2Sqrt => score.max(0.0).sqrt(),
            Metric::Ip => -score,
            _ => score,
        }
    }
}

impl std::str::FromStr for Metric {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "l2" | "sqeuclidean" => Ok(Metric::L2),
            "l2sqrt" | "euclidean" => Ok(Metric::L2Sqrt),
            "ip" | "inner_product" => Ok(Metric::Ip),
            "cosine" => Ok(Metric::Cosine),
            _ => Err(Error::InvalidArgument(format!(
                "unknown metric {s:?}; use l2 (squared), l2sqrt, ip or cosine"
            ))),
        }
    }
}

/// Which vectors a search may return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Filter {
    /// Every vector.
    #[default]
    None,
    /// One bitset over source ids (bit `id` = 1 keeps it); ids past the end are dropped.
    Bitset(Vec<u32>),
    /// One bitset per query, `words` 32-bit words each, query after query.
    Bitmap {
        /// Words per query.
        words: usize,
        /// `n_queries * words` words.
        bits: Vec<u32>,
    },
}

impl Filter {
    /// Name in plan names.
    pub fn name(&self) -> &'static str {
        match self {
            Filter::None => "none",
            Filter::Bitset(_) => "bitset",
            Filter::Bitmap { .. } => "bitmap",
        }
    }

    /// Whether query `query` keeps source id `id`.
    pub fn keeps(&self, query: usize, id: i64) -> bool {
        let bit = |words: &[u32]| {
            id >= 0
                && words
                    .get((id >> 5) as usize)
                    .is_some_and(|w| (w >> (id & 31)) & 1 == 1)
        };
        match self {
            Filter::None => true,
            Filter::Bitset(b) => bit(b),
            Filter::Bitmap { words, bits } => bits
                .get(query * words..(query + 1) * words)
                .is_some_and(bit),
        }
    }

    /// A bitset over `n_ids` ids keeping those where `keep(id)`.
    pub fn bitset(n_ids: usize, keep: impl Fn(i64) -> bool) -> Vec<u32> {
        let mut words = vec![0u32; n_ids.div_ceil(32)];
        for id in 0..n_ids {
            if keep(id as i64) {
                words[id / 32] |= 1 << (id % 32);
            }
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Rng;

    #[test]
    fn the_f32_score_is_the_f64_score_to_f32_rounding_in_every_metric() {
        let mut rng = Rng::new(7);
        // Lengths with and without a tail past the eight lanes, a zero vector for cosine.
        for dim in [1usize, 7, 8, 13, 128, 203] {
            let mut v =
                || -> Vec<f32> { (0..dim).map(|_| rng.below(255) as f32 - 127.0).collect() };
            let (q, x) = (v(), v());
            for metric in Metric::ALL {
                let (exact, fast) = (metric.score(&q, &x), metric.score_f32(&q, &x) as f64);
                let scale = 1.0 + exact.abs();
                assert!(
                    (exact - fast).abs() <= 1e-5 * scale,
                    "{metric:?} × {dim}: f64 {exact}, f32 {fast}"
                );
            }
            let zero = vec![0f32; dim];
            assert_eq!(Metric::Cosine.score_f32(&zero, &x), 1.0);
        }
    }
}
