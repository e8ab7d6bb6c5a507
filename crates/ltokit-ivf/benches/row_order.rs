//! The host's part of a build's nearest-first order (`build::row_order`: every row scored
//! against its centre, then each list's nearest rows selected), timed on synthetic data.
//! No GPU needed. `cargo bench -p ltokit-ivf --bench row_order [ROWS DIM LISTS]`
//! (default 1,000,000 × 128 i8 rows over 1,024 lists); prints the fastest of five runs.

use std::time::{Duration, Instant};

use ltokit_ivf::build::row_order;
use ltokit_ivf::data::{DType, Matrix, Rng};
use ltokit_ivf::Metric;

fn main() -> ltokit::Result<()> {
    // `cargo bench` passes `--bench`; the numbers are the only other arguments.
    let numbers: Vec<usize> = std::env::args().filter_map(|a| a.parse().ok()).collect();
    let [rows, dim, lists] = match numbers[..] {
        [r, d, l] => [r, d, l],
        _ => [1_000_000, 128, 1024],
    };
    let mut rng = Rng::new(38);
    let bytes: Vec<u8> = (0..rows * dim).map(|_| rng.below(256) as u8).collect();
    let base = Matrix::new(DType::I8, rows, dim, bytes)?;
    let centers: Vec<f32> = (0..lists * dim)
        .map(|_| rng.below(200) as f32 - 100.0)
        .collect();
    let assignment: Vec<u32> = (0..rows).map(|_| rng.below(lists) as u32).collect();
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let order = row_order(&base, &centers, &assignment, Metric::L2, lists)?;
        best = best.min(t.elapsed());
        assert_eq!(order.len(), rows);
    }
    let threads = ltokit::parallel::threads(0, usize::MAX);
    println!("row_order: {rows} × {dim} i8 rows, {lists} lists, {threads} threads: {best:?} (fastest of 5)");
    Ok(())
}
