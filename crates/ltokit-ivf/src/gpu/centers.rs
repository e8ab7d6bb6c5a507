//! The coarse centres on the device, with what the coarse kernels need of each: its norm
//! (squared for L2) and, on GPUs with mma.sync (sm_80 on), the centres split for the
//! tensor-core score matrices — into two 8-bit limbs for i8 and u8 queries
//! (kernels/coarse_imma.cu), into two f16 halves for f16 queries and for 8-bit queries too
//! wide for the limbs (kernels/coarse_h16.cu).

use half::f16;

use ltokit::launch::{CudaSlice, Gpu};
use ltokit::{Error, Result};

use crate::data::DType;
use crate::metric::Metric;

/// Centres of a tile of the f16 score matrix (`CH_TC` in kernels/coarse_h16.cu): the
/// split rows are padded to a multiple of it so that no copy is bounds-checked.
pub(crate) const HALF_TILE_CENTERS: usize = 64;
/// Dimensions of a chunk of the f16 score matrix (`CH_KC`): the split rows' width is
/// padded to a multiple of it.
pub(crate) const HALF_CHUNK_DIMS: usize = 32;
/// The largest scaled centre magnitude lies in [2^14, 2^15): inside f16's range (65,504)
/// with the low half of every value down to 2^-3 of the scaled units normal.
const HALF_TOP_EXPONENT: i32 = 14;

/// Centres on the device, ready to rank queries by `metric`.
pub struct DeviceCenters {
    pub(crate) centers: CudaSlice<f32>,
    pub(crate) norms: CudaSlice<f32>,
    /// The f16 split for the tensor-core score matrix, where queries are exact in f16.
    pub(crate) halves: Option<HalfCenters>,
    /// The two 8-bit limbs for the 8-bit queries' score matrix ([`split_limbs`]), in
    /// [`HalfCenters`]' layout, each centre's scale after the rows (its `inv_scale` is 1).
    pub(crate) limbs: Option<HalfCenters>,
    pub(crate) n: usize,
    pub(crate) dim: usize,
    /// The query type the splits were made for ([`DeviceCenters::upload`]).
    pub(crate) query_type: DType,
    metric: Metric,
}

/// Centres split into two f16 halves on the device (kernels/coarse_h16.cu): each value
/// `c`, scaled by `2^scale` (the largest magnitude then in [2^14, 2^15)), is `hi = f16(c')`
/// plus `lo = f16(c' − hi)` — together within 2^-22 of `c'`, or 2^-25 absolute where `lo`
/// is subnormal. Rows padded with zeros to [`HALF_TILE_CENTERS`] rows and
/// [`HALF_CHUNK_DIMS`] dimensions; every hi row, then every lo row.
pub(crate) struct HalfCenters {
    pub(crate) halves: CudaSlice<u16>,
    pub(crate) dim_pad: usize,
    pub(crate) n_pad: usize,
    /// 2^-scale: the factor that undoes the scaling in the kernel's epilogue.
    pub(crate) inv_scale: f32,
}

/// The host side of [`HalfCenters`]: the padded halves, `dim_pad`, `n_pad`, `inv_scale`.
pub(crate) struct HalfSplit {
    pub halves: Vec<u16>,
    pub dim_pad: usize,
    pub n_pad: usize,
    pub inv_scale: f32,
}

/// 2^e as an f32 (e in −126 ..= 127).
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// Splits `dim`-wide `centers` into [`HalfCenters`]' layout.
pub(crate) fn split_halves(centers: &[f32], dim: usize) -> HalfSplit {
    let dim_pad = dim.next_multiple_of(HALF_CHUNK_DIMS);
    let scale = top_scale(centers);
    let factor = pow2(scale);
    let (halves, n_pad) = cut_rows(
        centers,
        dim,
        dim_pad,
        |_| factor,
        |scaled| {
            let big = f16::from_f32(scaled);
            (
                big.to_bits(),
                f16::from_f32(scaled - big.to_f32()).to_bits(),
            )
        },
    );
    HalfSplit {
        halves,
        dim_pad,
        n_pad,
        inv_scale: pow2(-scale),
    }
}

/// Each value of the `dim`-wide `centers`, times its centre's `factor(c)`, cut by `cut`
/// into two parts: the first parts' rows, then the second parts', each `row_len` long and
/// padded with zeros, and their rows padded to a multiple of [`HALF_TILE_CENTERS`]
/// (returned).
fn cut_rows<T: Copy + Default>(
    centers: &[f32],
    dim: usize,
    row_len: usize,
    factor: impl Fn(usize) -> f32,
    cut: impl Fn(f32) -> (T, T),
) -> (Vec<T>, usize) {
    let n_pad = (centers.len() / dim).next_multiple_of(HALF_TILE_CENTERS);
    let mut parts = vec![T::default(); 2 * n_pad * row_len];
    let (first, second) = parts.split_at_mut(n_pad * row_len);
    for (c, row) in centers.chunks(dim).enumerate() {
        let f = factor(c);
        for (d, &v) in row.iter().enumerate() {
            (first[c * row_len + d], second[c * row_len + d]) = cut(v * f);
        }
    }
    (parts, n_pad)
}

/// Dimensions of a chunk of the 8-bit score matrix (`CI_KC` in kernels/coarse_imma.cu:
/// 128 bytes): the limb rows' width is padded to a multiple.
pub(crate) const LIMB_CHUNK_DIMS: usize = 128;
/// The widest dimension the 8-bit score matrix takes: a query's products with the low
/// limb (≤ 255 · 255 a dimension) must stay within its s32 accumulator.
pub(crate) const LIMB_MAX_DIM: usize = (i32::MAX as usize) / (255 * 255);

/// Cuts `dim`-wide `centers` into two 8-bit limbs for the 8-bit queries' score matrix
/// (kernels/coarse_imma.cu): each centre scaled by its own power of two `2^s_c` (its
/// largest magnitude then in [2^14, 2^15)) and each value rounded to an integer `v = 256
/// hi + lo`, `hi` signed and `lo` in 0 ..= 255 — the value to 2^-16 of its centre's
/// largest magnitude. A scale per centre, not one for all: with one, a far centre (an
/// outlier cluster, or the GPU tests' empty list at 10^4 in every dimension) took the
/// others' precision with it — on the H100 (session 31) a u8 × 40 query then ranked a
/// list 532 above its best (of 311,055), where the f16 split, exact to 2^-22 of each
/// value, never does. The limb rows are stored as [`HalfCenters`]' are (every hi row, then
/// every lo row, rows padded with zeros to [`HALF_TILE_CENTERS`] rows and
/// [`LIMB_CHUNK_DIMS`] bytes), two bytes a 16-bit word (`dim_pad` counts the words), then
/// each padded row's `2^-s_c` as an f32 (two words; 1 for the padding rows), which the
/// kernel multiplies into its products; `inv_scale` is 1.
pub(crate) fn split_limbs(centers: &[f32], dim: usize) -> HalfSplit {
    let row_bytes = dim.next_multiple_of(LIMB_CHUNK_DIMS);
    let scales: Vec<i32> = centers.chunks(dim).map(top_scale).collect();
    let (mut bytes, n_pad) = cut_rows(
        centers,
        dim,
        row_bytes,
        |c| pow2(scales[c]),
        |scaled| {
            let whole = scaled.round().clamp(-32768.0, 32767.0) as i32;
            (
                whole.div_euclid(256) as i8 as u8,
                whole.rem_euclid(256) as u8,
            )
        },
    );
    // Each padded row's 2^-s_c (1 for the padding rows).
    let inv_scales = (0..n_pad).map(|c| scales.get(c).map_or(1.0, |&s| pow2(-s)));
    bytes.extend(inv_scales.flat_map(f32::to_le_bytes));
    HalfSplit {
        halves: bytes
            .chunks(2)
            .map(|w| u16::from_le_bytes([w[0], w[1]]))
            .collect(),
        dim_pad: row_bytes / 2,
        n_pad,
        inv_scale: 1.0,
    }
}

/// The power of two that puts the largest magnitude of `centers` in [2^14, 2^15) (0 for
/// zero or non-finite centres).
fn top_scale(centers: &[f32]) -> i32 {
    let max_abs = centers.iter().fold(0f32, |m, v| m.max(v.abs()));
    // The exponent of the largest magnitude, read from its bits (log2 may round up
    // just below a power of two).
    if max_abs > 0.0 && max_abs.is_finite() {
        let top = ((max_abs.to_bits() >> 23) & 0xff) as i32 - 127;
        (HALF_TOP_EXPONENT - top).clamp(-126, 126)
    } else {
        0
    }
}

impl DeviceCenters {
    /// Uploads `centers` (`dim` wide, row-major) for ranking queries of `query_type` by
    /// `metric`; on sm_80 and later also, for 8-bit queries, their 8-bit limbs (half as many
    /// bytes as the centres, padded), and for f16 queries (and 8-bit ones wider than
    /// `LIMB_MAX_DIM`) their f16 split (as many bytes again).
    pub fn upload(
        gpu: &Gpu,
        centers: &[f32],
        dim: usize,
        metric: Metric,
        query_type: DType,
    ) -> Result<Self> {
        if dim == 0 || centers.is_empty() || !centers.len().is_multiple_of(dim) {
            return Err(Error::InvalidArgument(format!(
                "{} centre values are not rows of {dim}",
                centers.len()
            )));
        }
        let norms: Vec<f32> = centers
            .chunks(dim)
            .map(|c| {
                let n2: f32 = c.iter().map(|v| v * v).sum();
                if metric == Metric::Cosine {
                    n2.sqrt()
                } else {
                    n2
                }
            })
            .collect();
        let mma = gpu.compute_capability().major >= 8;
        let upload = |split: HalfSplit| -> Result<HalfCenters> {
            Ok(HalfCenters {
                halves: gpu.upload(&split.halves)?,
                dim_pad: split.dim_pad,
                n_pad: split.n_pad,
                inv_scale: split.inv_scale,
            })
        };
        // 8-bit queries take the limbs up to LIMB_MAX_DIM (`MatrixArith::score_kernel`),
        // the f16 split only past it.
        let limbs_apply = mma && matches!(query_type, DType::I8 | DType::U8) && dim <= LIMB_MAX_DIM;
        let halves = (mma && query_type != DType::F32 && !limbs_apply)
            .then(|| upload(split_halves(centers, dim)))
            .transpose()?;
        let limbs = limbs_apply
            .then(|| upload(split_limbs(centers, dim)))
            .transpose()?;
        Ok(DeviceCenters {
            centers: gpu.upload(centers)?,
            norms: gpu.upload(&norms)?,
            halves,
            limbs,
            n: norms.len(),
            dim,
            query_type,
            metric,
        })
    }

    /// Number of centres.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are none (never, once uploaded).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The metric's code in the coarse kernels (kernels/coarse.cuh): 0 L2, 1 inner
    /// product, 2 cosine.
    pub(crate) fn metric_code(&self) -> i32 {
        match self.metric {
            Metric::L2 | Metric::L2Sqrt => 0,
            Metric::Ip => 1,
            Metric::Cosine => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(split: &HalfSplit, c: usize, d: usize) -> f64 {
        let at = c * split.dim_pad + d;
        let lo_at = split.n_pad * split.dim_pad + at;
        (f16::from_bits(split.halves[at]).to_f64() + f16::from_bits(split.halves[lo_at]).to_f64())
            * split.inv_scale as f64
    }

    /// Uniform draws from [0, 1) by xorshift64 from `seed` (not zero).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn the_two_halves_hold_each_centre_to_22_bits_at_every_magnitude() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        // Magnitudes from 1e-6 to 1e6 in one set, and sets of small and of large values.
        for spread in [(1e-6f64, 1e6f64), (1e-3, 1e-2), (100.0, 255.0), (1e4, 3e5)] {
            let (dim, n) = (37, 70);
            let centers: Vec<f32> = (0..dim * n)
                .map(|_| {
                    let m = spread.0 * (spread.1 / spread.0).powf(next());
                    (if next() < 0.5 { -m } else { m }) as f32
                })
                .collect();
            let max_abs = centers.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
            let split = split_halves(&centers, dim);
            assert_eq!((split.n_pad, split.dim_pad), (128, 64));
            assert_eq!(split.halves.len(), 2 * 128 * 64);
            for c in 0..n {
                for d in 0..dim {
                    let v = centers[c * dim + d] as f64;
                    let err = (value(&split, c, d) - v).abs();
                    // 2^-22 of the value, or 2^-25 of the scaled unit (max / 2^14) where
                    // the low half is subnormal.
                    let bound = (v.abs() * 2f64.powi(-22)).max(max_abs * 2f64.powi(-14 - 25));
                    assert!(
                        err <= bound,
                        "{spread:?} centre {c} dim {d}: {v} off by {err}"
                    );
                }
                for d in dim..split.dim_pad {
                    assert_eq!(value(&split, c, d), 0.0, "padding of row {c}");
                }
            }
            for c in n..split.n_pad {
                assert!((0..split.dim_pad).all(|d| value(&split, c, d) == 0.0));
            }
            // The largest scaled magnitude is within f16's range, in [2^14, 2^15].
            let scaled_max = max_abs / split.inv_scale as f64;
            assert!(
                (16384.0..=32768.0).contains(&scaled_max),
                "{spread:?}: {scaled_max}"
            );
        }
    }

    #[test]
    fn the_two_limbs_hold_each_centre_to_2_16_of_its_largest_even_beside_a_far_one() {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        for spread in [(1e-6f64, 1e6f64), (100.0, 255.0), (-128.0, 127.0)] {
            let (dim, n) = (70, 65);
            let mut centers: Vec<f32> = (0..dim * n)
                .map(|_| (spread.0 + (spread.1 - spread.0) * next()) as f32)
                .collect();
            // A far centre, as the GPU tests' empty list (10^4 in every dimension, here
            // 10^4 past the spread): it must not coarsen the others.
            centers[..dim].fill((spread.1.abs() * 1e4) as f32);
            let split = split_limbs(&centers, dim);
            assert_eq!((split.n_pad, split.dim_pad), (128, 64));
            assert_eq!(split.inv_scale, 1.0);
            let bytes: Vec<u8> = split.halves.iter().flat_map(|w| w.to_le_bytes()).collect();
            let row_bytes = 2 * split.dim_pad;
            assert_eq!(bytes.len(), 2 * split.n_pad * row_bytes + 4 * split.n_pad);
            let inv_scale = |c: usize| {
                let at = 2 * split.n_pad * row_bytes + 4 * c;
                f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as f64
            };
            let limb_value = |c: usize, d: usize| {
                let hi = bytes[c * row_bytes + d] as i8 as f64;
                let lo = bytes[(split.n_pad + c) * row_bytes + d] as f64;
                (256.0 * hi + lo) * inv_scale(c)
            };
            for c in 0..split.n_pad {
                let row = if c < n {
                    &centers[c * dim..(c + 1) * dim]
                } else {
                    &[][..]
                };
                let max_abs = row.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
                if c >= n {
                    assert_eq!(inv_scale(c), 1.0, "padding row {c}");
                }
                for d in 0..row_bytes {
                    let v = row.get(d).copied().unwrap_or(0.0) as f64;
                    let err = (limb_value(c, d) - v).abs();
                    // Half a unit of the centre's scaled integers: its largest magnitude
                    // is at least 2^14 of them.
                    assert!(
                        err <= max_abs * 2f64.powi(-15),
                        "{spread:?} centre {c} dim {d}: {v} off by {err}"
                    );
                }
            }
        }
    }

    #[test]
    fn limb_rows_pad_to_whole_128_byte_chunks_of_zeros() {
        // kernels/coarse_imma.cu copies 128-byte chunks of every limb row unchecked: a row
        // must end on a whole chunk, its padding zero (the queries' padding is zero too,
        // but a row's tail must not be the next row's start, nor past the allocation).
        for (dim, row_bytes) in [(1, 128), (128, 128), (129, 256), (784, 896)] {
            let centers: Vec<f32> = (0..3 * dim).map(|i| 1.0 + (i % 7) as f32).collect();
            let split = split_limbs(&centers, dim);
            assert_eq!(2 * split.dim_pad, row_bytes, "dim {dim}");
            let bytes: Vec<u8> = split.halves.iter().flat_map(|w| w.to_le_bytes()).collect();
            for row in 0..2 * split.n_pad {
                let tail = &bytes[row * row_bytes + dim..(row + 1) * row_bytes];
                assert!(
                    tail.iter().all(|&b| b == 0),
                    "dim {dim}: row {row}'s padding"
                );
            }
        }
    }

    #[test]
    fn zero_centres_split_into_zeros_unscaled() {
        let split = split_halves(&[0.0; 8], 4);
        assert_eq!(split.inv_scale, 1.0);
        assert!(split.halves.iter().all(|&h| h == 0));
    }
}
