//! Which scan a search runs: [`ScanPath`], and the batch shapes from which `Auto` takes
//! the list-major scan (thresholds measured on the H200).

use std::sync::atomic::{AtomicU8, Ordering};

use ltokit::{Error, Result};

use super::LmTile;
use crate::data::DType;
use crate::gpu::{DeviceLists, IvfGpu};

/// Which scan a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScanPath {
    /// One block per (query, probes) streams the probed lists for that query alone.
    PerQuery,
    /// Pairs grouped by list; each list read once per tile of its queries.
    ListMajor,
    /// List-major when the batch gives each probed list enough queries (see
    /// [`min_pairs_per_list`]) and the shape fits its shared memory, else per-query.
    #[default]
    Auto,
}

impl ScanPath {
    /// Parses `per-query`, `list-major` or `auto`.
    pub fn parse(s: &str) -> Result<ScanPath> {
        match s {
            "per-query" => Ok(ScanPath::PerQuery),
            "list-major" => Ok(ScanPath::ListMajor),
            "auto" => Ok(ScanPath::Auto),
            other => Err(Error::InvalidArgument(format!(
                "unknown scan path {other:?}; use per-query, list-major or auto"
            ))),
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            ScanPath::PerQuery => "per-query",
            ScanPath::ListMajor => "list-major",
            ScanPath::Auto => "auto",
        }
    }

    /// The cell's code: 0 (a new cell) is `Auto`, the default.
    pub(crate) fn to_code(self) -> u8 {
        match self {
            ScanPath::Auto => 0,
            ScanPath::PerQuery => 1,
            ScanPath::ListMajor => 2,
        }
    }

    pub(crate) fn from_code(code: u8) -> ScanPath {
        match code {
            1 => ScanPath::PerQuery,
            2 => ScanPath::ListMajor,
            _ => ScanPath::Auto,
        }
    }
}

/// A [`ScanPath`] that can be changed through a shared reference (new: `Auto`).
#[derive(Debug, Default)]
pub(crate) struct ScanPathCell(AtomicU8);

impl ScanPathCell {
    pub(crate) fn get(&self) -> ScanPath {
        ScanPath::from_code(self.0.load(Ordering::Relaxed))
    }
    pub(crate) fn set(&self, path: ScanPath) {
        self.0.store(path.to_code(), Ordering::Relaxed);
    }
}

/// Average (query, probe) pairs per list from which `Auto` takes the list-major scan for
/// f32 lists. Below it most tiles hold a few queries, and the per-query scan, which does
/// no arithmetic for empty tile slots, is faster. Measured on the H200 with the mma.sync
/// tile and the register top-k (1M × 128 f32, 1,024 lists, 20 probes, one call waited
/// for; docs/gpu-runs/2026-11-30-mma-tiles/b-mma-tiles): at 2.0 pairs a list (100
/// queries) per-query is 4 % faster (0.336 vs 0.349 ms), at 5.9 (300 queries) list-major
/// is 1.77× faster (0.426 vs 0.752 ms), and at 4.9 (1,000 × 5) 1.53× (0.437 vs 0.664 ms,
/// two calls of the same build). (Before those kernels the crossover was 6.)
pub const MIN_PAIRS_PER_LIST_F32: f64 = 2.5;
/// The same for f16 lists: list-major is 14 % faster already at 9.8 pairs a list and 33 %
/// at 19.5 (1M × 128 f16, 10,000 queries × 1 and 2 probes).
pub const MIN_PAIRS_PER_LIST_F16: f64 = 8.0;
/// The same for 8-bit lists. With the WMMA tile list-major was 7 % faster at 19.5 pairs a
/// list, 12 % at 29 and 28 % at 49 (1M × 128 i8, 10,000 queries × 2, 3, 5 probes), hence
/// 16; with the mma.sync tile it is 1.61× faster at 9.8 (1,000 queries × 10 probes: 3.29 M
/// vs 2.05 M QPS) and 2.04× at 19.5 (docs/gpu-runs/2026-11-30-mma-tiles/d-vs-cuvs-1k-and-
/// tests/vs1k). Below 9.8 it was not measured; 8 is f16's measured crossover.
pub const MIN_PAIRS_PER_LIST_8BIT: f64 = 8.0;
/// Lists shorter than a row is wide (on average) make a WMMA or FMA tile's query staging
/// and second scoring pass a large part of its work: for those tiles the thresholds above
/// are multiplied by this. Measured on 60k × 784 u8 images in 256 lists (234 rows a list)
/// with the WMMA tile: per-query was 13 % faster at 78 pairs a list and 6 % at 117,
/// list-major 9 % faster at 195. The mma.sync tiles score in registers and need no
/// factor: on the same images list-major was 4 % faster at 7.8 pairs a list, 18 % at 19.5
/// and 43 % at 39 (1,000 queries × 2, 5, 10 probes; docs/gpu-runs/2026-11-30-s7/grid, in
/// the same call as cuVS), where the factor of 8 had kept auto on the per-query scan.
pub const SHORT_LIST_FACTOR: f64 = 8.0;

/// The pairs per list from which `Auto` takes the list-major scan with `tile` for lists
/// of `dim` values a row and `rows_per_list` rows a list on average.
pub fn min_pairs_per_list(tile: LmTile, dim: usize, rows_per_list: f64) -> f64 {
    let base = match tile.dtype() {
        DType::F32 => MIN_PAIRS_PER_LIST_F32,
        DType::F16 => MIN_PAIRS_PER_LIST_F16,
        DType::I8 | DType::U8 => MIN_PAIRS_PER_LIST_8BIT,
    };
    if rows_per_list < dim as f64 && !matches!(tile, LmTile::Mma(_)) {
        base * SHORT_LIST_FACTOR
    } else {
        base
    }
}

impl IvfGpu {
    /// Whether `path` means the list-major scan for this batch shape.
    pub(crate) fn use_list_major(
        &self,
        path: ScanPath,
        lists: &DeviceLists,
        nb: usize,
        n_probes: usize,
        k: usize,
    ) -> Result<bool> {
        let n_pairs = nb * n_probes;
        let tile = || self.list_major_tile(lists.dtype, lists.dim, k, n_pairs, lists.n_lists);
        match path {
            ScanPath::PerQuery => Ok(false),
            ScanPath::ListMajor => match tile()? {
                Err(why) => Err(Error::InvalidArgument(why)),
                Ok(_) => Ok(true),
            },
            ScanPath::Auto => {
                let per_list = n_pairs as f64 / lists.n_lists.max(1) as f64;
                // Rows a list on average, padding included (one id per stored row).
                let rows_per_list = lists.ids.len() as f64 / lists.n_lists.max(1) as f64;
                let arith = self.list_major_tile_arithmetic(lists.dtype);
                let needed = min_pairs_per_list(arith, lists.dim, rows_per_list);
                Ok(per_list >= needed && tile()?.is_ok())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_paths_parse_their_names_and_nothing_else() {
        for path in [ScanPath::PerQuery, ScanPath::ListMajor, ScanPath::Auto] {
            assert_eq!(ScanPath::parse(path.name()).unwrap(), path);
            assert_eq!(ScanPath::from_code(path.to_code()), path);
        }
        let err = ScanPath::parse("listmajor").unwrap_err().to_string();
        assert!(err.contains("per-query, list-major or auto"), "{err}");
        let cell = ScanPathCell::default();
        assert_eq!(cell.get(), ScanPath::Auto);
        cell.set(ScanPath::ListMajor);
        assert_eq!(cell.get(), ScanPath::ListMajor);
    }

    #[test]
    fn narrower_types_and_short_wide_lists_need_at_least_as_many_pairs_per_list() {
        let mma = |dtype, dim, rows| min_pairs_per_list(LmTile::Mma(dtype), dim, rows);
        let f32_rule = mma(DType::F32, 128, 977.0);
        assert_eq!(f32_rule, MIN_PAIRS_PER_LIST_F32);
        assert!(mma(DType::F16, 128, 977.0) > f32_rule);
        assert!(mma(DType::I8, 128, 977.0) >= mma(DType::F16, 128, 977.0));
        assert_eq!(mma(DType::U8, 128, 977.0), mma(DType::I8, 128, 977.0));
        // 784-wide rows in lists of 234: with the mma tile list-major measured faster from
        // 7.8 pairs a list (1,000 queries × 2 probes), so no factor; the WMMA tile still
        // needs more (per-query was faster there up to 117).
        let images = mma(DType::U8, 784, 234.0);
        assert!(images <= 8.0, "{images}");
        let images_wmma = min_pairs_per_list(LmTile::Wmma(DType::U8), 784, 234.0);
        assert!(images_wmma > 7.8 && images_wmma < 78.0, "{images_wmma}");
        assert_eq!(
            min_pairs_per_list(LmTile::Wmma(DType::U8), 784, 784.0),
            MIN_PAIRS_PER_LIST_8BIT
        );
        // The FMA tile is f32's portable tile: f32's threshold.
        assert_eq!(
            min_pairs_per_list(LmTile::F32Fma, 128, 977.0),
            MIN_PAIRS_PER_LIST_F32
        );
    }
}
