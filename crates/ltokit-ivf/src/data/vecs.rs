//! `.fvecs` / `.bvecs` / `.ivecs` files: each row is an `i32` dimension, then that many
//! elements (f32, u8, i32).

use std::path::Path;

use ltokit::{Error, Result};

use super::{bad, DType, Matrix};

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

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
