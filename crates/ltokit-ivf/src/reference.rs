//! CPU references: exact search and IVF search, in f64, and recall.

use crate::index::IvfIndex;
use crate::metric::{Filter, Metric};

/// One query's results: (id, reported distance), best first.
pub type Hits = Vec<(i64, f64)>;

/// The `n_probes` best lists for `query` by centre score.
pub fn coarse(index: &IvfIndex, query: &[f32], n_probes: usize) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> = index
        .centers
        .chunks(index.dim)
        .enumerate()
        .map(|(l, c)| (l, index.metric.score(query, c)))
        .collect();
    scored.sort_by(|a, b| a.1.total_cmp(&b.1));
    scored.truncate(n_probes);
    scored
}

/// Scans `lists` for query `qi` exactly; returns the top `k` (fewer if fewer are kept).
pub fn scan_lists(
    index: &IvfIndex,
    qi: usize,
    query: &[f32],
    lists: &[usize],
    k: usize,
    filter: &Filter,
) -> Hits {
    let mut all: Vec<(i64, f64)> = Vec::new();
    for &l in lists {
        for r in 0..index.list_size[l] as usize {
            let (_, id) = index.row(l, r);
            if filter.keeps(qi, id) {
                all.push((id, index.metric.score(query, &index.row_f32(l, r))));
            }
        }
    }
    all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all.into_iter()
        .map(|(id, s)| (id, index.metric.report(s)))
        .collect()
}

/// Exact search over rows (`base` f32 row-major, ids 0..n).
pub fn exact(metric: Metric, base: &[f32], dim: usize, query: &[f32], k: usize) -> Hits {
    let mut all: Vec<(i64, f64)> = base
        .chunks(dim)
        .enumerate()
        .map(|(i, x)| (i as i64, metric.score(query, x)))
        .collect();
    all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    all.into_iter()
        .map(|(id, s)| (id, metric.report(s)))
        .collect()
}

/// Recall@k: the fraction of true neighbours (first `k` of each `truth` row) found among
/// the first `k` results.
pub fn recall(found: &[Vec<i64>], truth: &[Vec<i64>], k: usize) -> f64 {
    let mut hit = 0usize;
    let mut total = 0usize;
    for (f, t) in found.iter().zip(truth) {
        let t: std::collections::HashSet<i64> =
            t.iter().take(k).copied().filter(|&i| i >= 0).collect();
        total += t.len();
        hit += f.iter().take(k).filter(|i| t.contains(i)).count();
    }
    if total == 0 {
        1.0
    } else {
        hit as f64 / total as f64
    }
}
