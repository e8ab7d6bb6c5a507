//! Vectors on the host: element types, matrices, `.npy` / `.fvecs` / `.bvecs` / `.ivecs`
//! files, and a seeded synthetic generator.

use std::path::Path;

use ltokit::{Error, Result};

/// Element type of stored vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 16-bit float (accumulated in f32).
    F16,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 => 2,
            DType::I8 | DType::U8 => 1,
        }
    }

    /// The name used in kernel plan names.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::I8 => "i8",
            DType::U8 => "u8",
        }
    }

    /// All types.
    pub const ALL: [DType; 4] = [DType::F32, DType::F16, DType::I8, DType::U8];
}

impl std::str::FromStr for DType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f32" | "float32" => Ok(DType::F32),
            "f16" | "float16" => Ok(DType::F16),
            "i8" | "int8" => Ok(DType::I8),
            "u8" | "uint8" => Ok(DType::U8),
            _ => Err(Error::InvalidArgument(format!(
                "unknown data type {s:?}; use f32, f16, i8 or u8"
            ))),
        }
    }
}

/// A row-major matrix of vectors of one element type.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// Element type.
    pub dtype: DType,
    /// Number of vectors.
    pub rows: usize,
    /// Dimensions per vector.
    pub dim: usize,
    /// `rows * dim * dtype.size()` bytes, little-endian.
    pub bytes: Vec<u8>,
}

impl Matrix {
    /// A matrix from raw bytes, checking the size.
    pub fn new(dtype: DType, rows: usize, dim: usize, bytes: Vec<u8>) -> Result<Self> {
        if dim == 0 {
            return Err(Error::InvalidArgument(
                "vectors must have at least one dimension".into(),
            ));
        }
        let want = rows
            .checked_mul(dim)
            .and_then(|n| n.checked_mul(dtype.size()));
        if want != Some(bytes.len()) {
            return Err(Error::InvalidArgument(format!(
                "{rows} × {dim} {} needs {want:?} bytes, got {}",
                dtype.name(),
                bytes.len()
            )));
        }
        Ok(Matrix {
            dtype,
            rows,
            dim,
            bytes,
        })
    }

    /// A float32 matrix.
    pub fn from_f32(rows: usize, dim: usize, values: &[f32]) -> Result<Self> {
        Matrix::new(
            DType::F32,
            rows,
            dim,
            values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        )
    }

    /// Element `j` of row `i`, as f32.
    pub fn get(&self, i: usize, j: usize) -> f32 {
        let at = (i * self.dim + j) * self.dtype.size();
        let b = &self.bytes[at..at + self.dtype.size()];
        match self.dtype {
            DType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            DType::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f32(),
            DType::I8 => b[0] as i8 as f32,
            DType::U8 => b[0] as f32,
        }
    }

    /// Row `i` as f32.
    pub fn row_f32(&self, i: usize) -> Vec<f32> {
        (0..self.dim).map(|j| self.get(i, j)).collect()
    }

    /// The whole matrix as f32, row-major.
    pub fn to_f32(&self) -> Vec<f32> {
        match self.dtype {
            DType::F32 => self
                .bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            DType::F16 => self
                .bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            DType::I8 => self.bytes.iter().map(|&b| b as i8 as f32).collect(),
            DType::U8 => self.bytes.iter().map(|&b| b as f32).collect(),
        }
    }

    /// Bytes of row `i`.
    pub fn row_bytes(&self, i: usize) -> &[u8] {
        let n = self.dim * self.dtype.size();
        &self.bytes[i * n..(i + 1) * n]
    }

    /// Rows `rows` (in order) as a new matrix.
    pub fn select(&self, rows: &[usize]) -> Matrix {
        let mut bytes = Vec::with_capacity(rows.len() * self.dim * self.dtype.size());
        for &r in rows {
            bytes.extend_from_slice(self.row_bytes(r));
        }
        Matrix {
            dtype: self.dtype,
            rows: rows.len(),
            dim: self.dim,
            bytes,
        }
    }

    /// Fails on NaN or infinite elements, naming the first.
    pub fn check_finite(&self, what: &str) -> Result<()> {
        if !matches!(self.dtype, DType::F32 | DType::F16) {
            return Ok(());
        }
        check_finite_f32(&self.to_f32(), self.dim, what)
    }
}

/// Fails on NaN or infinite values of row-major `values` (`dim` wide), naming the first.
pub fn check_finite_f32(values: &[f32], dim: usize, what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(at) => Err(Error::InvalidArgument(format!(
            "{what}: vector {} has a NaN or infinite element at dimension {}; clean the data first",
            at / dim.max(1),
            at % dim.max(1)
        ))),
        None => Ok(()),
    }
}

/// Reads a `.npy` (2-D, C order, float32/float16/int8/uint8), `.fvecs`, `.bvecs`
/// (uint8) or `.ivecs` (read as... int32 is not a vector type: rejected) file.
pub fn read_vectors(path: &Path) -> Result<Matrix> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let label = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "npy" => parse_npy(&label, &data),
        "fvecs" => parse_vecs(&label, &data, DType::F32),
        "bvecs" => parse_vecs(&label, &data, DType::U8),
        _ => Err(Error::UnrecognizedInput {
            input: label,
            what: "unknown vector file type; use .npy, .fvecs or .bvecs".into(),
        }),
    }
}

/// Reads an `.ivecs` file (e.g. ground-truth neighbour ids): rows of int32.
pub fn read_ivecs(path: &Path) -> Result<Vec<Vec<i32>>> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let m = parse_vecs_raw(&path.display().to_string(), &data, 4)?;
    Ok(m.1
        .chunks(4 * m.0.max(1))
        .map(|row| {
            row.chunks(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect())
}

fn bad(label: &str, what: impl Into<String>) -> Error {
    Error::UnrecognizedInput {
        input: label.to_string(),
        what: what.into(),
    }
}

/// Parses `.fvecs`/`.bvecs`: each row is `i32 dim` then `dim` elements.
pub fn parse_vecs(label: &str, data: &[u8], dtype: DType) -> Result<Matrix> {
    let (dim, bytes) = parse_vecs_raw(label, data, dtype.size())?;
    let rows = if dim == 0 {
        0
    } else {
        bytes.len() / (dim * dtype.size())
    };
    Matrix::new(dtype, rows, dim.max(1), bytes).map_err(|e| bad(label, e.to_string()))
}

fn parse_vecs_raw(label: &str, data: &[u8], elem: usize) -> Result<(usize, Vec<u8>)> {
    if data.len() < 4 {
        return Err(bad(label, "empty or truncated vecs file"));
    }
    let dim = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    if dim <= 0 || dim > 1 << 20 {
        return Err(bad(
            label,
            format!("dimension {dim} in the first row is not plausible"),
        ));
    }
    let dim = dim as usize;
    let row = 4 + dim * elem;
    if !data.len().is_multiple_of(row) {
        return Err(bad(label, format!("size {} is not a multiple of the row size {row} (truncated, or rows of different dimensions)", data.len())));
    }
    let mut out = Vec::with_capacity(data.len() / row * dim * elem);
    for (i, r) in data.chunks(row).enumerate() {
        let d = i32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        if d as usize != dim {
            return Err(bad(
                label,
                format!("row {i} has dimension {d}, the first row {dim}"),
            ));
        }
        out.extend_from_slice(&r[4..]);
    }
    Ok((dim, out))
}

/// Parses a `.npy` file (format 1.0–3.0, 2-D, C order, little-endian).
pub fn parse_npy(label: &str, data: &[u8]) -> Result<Matrix> {
    if data.len() < 10 || &data[..6] != b"\x93NUMPY" {
        return Err(bad(label, "not a .npy file (magic missing)"));
    }
    let (header_len, start) = match data[6] {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10usize),
        2 | 3 if data.len() >= 12 => (
            u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
            12,
        ),
        v => {
            return Err(bad(
                label,
                format!(".npy format version {v} is not supported"),
            ))
        }
    };
    let header = data
        .get(start..start.saturating_add(header_len))
        .ok_or_else(|| bad(label, "truncated .npy header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad(label, ".npy header is not text"))?;
    let field = |name: &str| -> Option<&str> {
        let at = header.find(&format!("'{name}'"))?;
        Some(
            header[at + name.len() + 2..]
                .trim_start()
                .trim_start_matches(':')
                .trim_start(),
        )
    };
    let descr = field("descr")
        .and_then(|s| s.strip_prefix('\''))
        .and_then(|s| s.split('\'').next())
        .ok_or_else(|| bad(label, ".npy header has no descr"))?;
    let dtype = match descr {
        "<f4" => DType::F32,
        "<f2" => DType::F16,
        "|i1" | "<i1" => DType::I8,
        "|u1" | "<u1" => DType::U8,
        other => {
            return Err(bad(
                label,
                format!("element type {other} is not supported (float32, float16, int8, uint8)"),
            ))
        }
    };
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad(
            label,
            "Fortran-order arrays are not supported; save with np.ascontiguousarray",
        ));
    }
    let shape = field("shape")
        .and_then(|s| s.strip_prefix('('))
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad(label, ".npy header has no shape"))?;
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad(label, format!("bad shape ({shape})")))?;
    let (rows, dim) = match dims[..] {
        [rows, dim] => (rows, dim),
        _ => {
            return Err(bad(
                label,
                format!("shape ({shape}) is not 2-D (rows, dim)"),
            ))
        }
    };
    let body = &data[start + header_len..];
    let want = rows
        .checked_mul(dim)
        .and_then(|n| n.checked_mul(dtype.size()))
        .ok_or_else(|| bad(label, "shape too large"))?;
    if body.len() != want {
        return Err(bad(
            label,
            format!(
                "holds {} data bytes, the shape needs {want} (truncated?)",
                body.len()
            ),
        ));
    }
    Matrix::new(dtype, rows, dim, body.to_vec()).map_err(|e| bad(label, e.to_string()))
}

/// Writes a matrix as `.npy` (format 1.0).
pub fn write_npy(path: &Path, m: &Matrix) -> Result<()> {
    let descr = match m.dtype {
        DType::F32 => "<f4",
        DType::F16 => "<f2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}, {}), }}",
        m.rows, m.dim
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&m.bytes);
    std::fs::write(path, out).map_err(|e| Error::io(path, e))
}

/// SplitMix64: small, seeded, reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip_every_type() {
        let dir = std::env::temp_dir().join(format!("ltokit-ivf-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for dtype in DType::ALL {
            let m = synthetic(7, 5, 2, dtype, 3);
            let p = dir.join(format!("{}.npy", dtype.name()));
            write_npy(&p, &m).unwrap();
            assert_eq!(read_vectors(&p).unwrap(), m);
        }
    }

    #[test]
    fn vecs_files_parse_and_reject_damage() {
        let mut f = Vec::new();
        for row in [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]] {
            f.extend_from_slice(&3i32.to_le_bytes());
            for v in row {
                f.extend_from_slice(&v.to_le_bytes());
            }
        }
        let m = parse_vecs("a.fvecs", &f, DType::F32).unwrap();
        assert_eq!((m.rows, m.dim), (2, 3));
        assert_eq!(m.row_f32(1), [4.0, 5.0, 6.0]);
        assert!(parse_vecs("a.fvecs", &f[..f.len() - 1], DType::F32)
            .unwrap_err()
            .to_string()
            .contains("not a multiple"));
        let mut other = f.clone();
        other[16] = 2;
        assert!(parse_vecs("a.fvecs", &other, DType::F32).is_err());
        assert!(parse_npy("x.npy", b"\x93NUMPY\x01\x00\x05\x00{'de").is_err());
    }

    #[test]
    fn non_finite_vectors_are_named() {
        let m = Matrix::from_f32(2, 2, &[0.0, 1.0, f32::NAN, 2.0]).unwrap();
        assert!(m
            .check_finite("base")
            .unwrap_err()
            .to_string()
            .contains("vector 1"));
    }
}
