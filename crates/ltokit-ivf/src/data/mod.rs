//! Vectors on the host: element types and matrices; their files and a synthetic
//! generator, one module each.
//!
//! | module | job |
//! |---|---|
//! | [`npy`] | `.npy` files: a parser of the header's dict syntax, reader and writer |
//! | [`vecs`] | `.fvecs` / `.bvecs` / `.ivecs` files |
//! | [`synthetic`](mod@synthetic) | seeded clustered data for demos and tests |

pub mod npy;
pub mod synthetic;
pub mod vecs;

pub use npy::{parse_npy, write_npy};
pub use synthetic::{parse_synthetic, synthetic, synthetic_pair, Rng};
pub use vecs::{parse_vecs, read_ivecs};

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
        let mut out = vec![0f32; self.dim];
        self.row_f32_into(i, &mut out);
        out
    }

    /// Row `i` converted to f32 into `out` (`dim` values).
    pub fn row_f32_into(&self, i: usize, out: &mut [f32]) {
        convert_f32(self.dtype, self.row_bytes(i), out);
    }

    /// The whole matrix as f32, row-major.
    pub fn to_f32(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.rows * self.dim];
        convert_f32(self.dtype, &self.bytes, &mut out);
        out
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

/// Converts stored values of `dtype` to f32 (as many as `out` holds).
fn convert_f32(dtype: DType, bytes: &[u8], out: &mut [f32]) {
    match dtype {
        DType::F32 => {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        DType::F16 => {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
            }
        }
        DType::I8 => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = b as i8 as f32;
            }
        }
        DType::U8 => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = b as f32;
            }
        }
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
/// (uint8) file; `.ivecs` files hold ids, not vectors: [`read_ivecs`].
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

pub(crate) fn bad(label: &str, what: impl Into<String>) -> Error {
    Error::UnrecognizedInput {
        input: label.to_string(),
        what: what.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
