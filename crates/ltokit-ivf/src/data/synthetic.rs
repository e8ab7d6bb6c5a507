//! Seeded clustered vectors (`synthetic:ROWS:DIM[:DTYPE]`) for demos and tests.

use ltokit::{Error, Result};

use super::{DType, Matrix};

/// A small seeded generator (fastrand's wyrand) with the draws synthetic data and
/// k-means need: reproducible for a seed.
#[derive(Debug, Clone)]
pub struct Rng(fastrand::Rng);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(fastrand::Rng::with_seed(seed))
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.u64(..)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f32 {
        self.0.f32()
    }
    /// Uniform index below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n.max(1))
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f32 {
        let u = self.uniform().max(1e-7);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f32::consts::PI * v).cos()
    }
}

/// `rows` vectors of `dim` dimensions around `clusters` random centres (so that IVF has
/// structure to find), in `dtype`: floats in about [-1, 1], i8 in [-128, 127], u8 in
/// [0, 255].
pub fn synthetic(rows: usize, dim: usize, clusters: usize, dtype: DType, seed: u64) -> Matrix {
    let mut rng = Rng::new(seed);
    let centres: Vec<f32> = (0..clusters.max(1) * dim)
        .map(|_| rng.uniform() * 2.0 - 1.0)
        .collect();
    let mut bytes = Vec::with_capacity(rows * dim * dtype.size());
    for _ in 0..rows {
        let c = rng.below(clusters.max(1));
        for j in 0..dim {
            let v = (centres[c * dim + j] + 0.25 * rng.normal()).clamp(-1.0, 1.0);
            match dtype {
                DType::F32 => bytes.extend_from_slice(&v.to_le_bytes()),
                DType::F16 => bytes.extend_from_slice(&half::f16::from_f32(v).to_le_bytes()),
                DType::I8 => bytes.push((v * 127.0).round() as i8 as u8),
                DType::U8 => bytes.push(((v + 1.0) * 127.5).round() as u8),
            }
        }
    }
    Matrix {
        dtype,
        rows,
        dim,
        bytes,
    }
}

/// A base set and a query set drawn from the same clusters (`spec` is
/// `synthetic:ROWS:DIM[:DTYPE]` for the base; the queries are `query_rows` more draws).
pub fn synthetic_pair(
    base_rows: usize,
    query_rows: usize,
    dim: usize,
    dtype: DType,
    seed: u64,
) -> (Matrix, Matrix) {
    let clusters = (base_rows / 1000).clamp(1, 4096);
    let all = synthetic(base_rows + query_rows, dim, clusters, dtype, seed);
    let n = dim * dtype.size();
    let (b, q) = all.bytes.split_at(base_rows * n);
    (
        Matrix {
            dtype,
            rows: base_rows,
            dim,
            bytes: b.to_vec(),
        },
        Matrix {
            dtype,
            rows: query_rows,
            dim,
            bytes: q.to_vec(),
        },
    )
}

/// Parses `synthetic:ROWS:DIM[:DTYPE]`.
pub fn parse_synthetic(spec: &str) -> Result<Option<(usize, usize, DType)>> {
    let Some(rest) = spec.strip_prefix("synthetic:") else {
        return Ok(None);
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let bad = || {
        Error::InvalidArgument(format!(
            "{spec:?}: expected synthetic:ROWS:DIM[:f32|f16|i8|u8]"
        ))
    };
    let rows = parts.first().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    let dim = parts
        .get(1)
        .and_then(|p| p.parse().ok())
        .filter(|&d: &usize| d > 0)
        .ok_or_else(bad)?;
    let dtype = match parts.get(2) {
        Some(t) => t.parse()?,
        None => DType::F32,
    };
    Ok(Some((rows, dim, dtype)))
}
