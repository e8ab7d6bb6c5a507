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
