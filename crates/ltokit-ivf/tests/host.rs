//! Host-side checks (CI, no GPU): every variant has its own plan of the right fragments
//! in the embedded bundle, and the CPU reference search through the interleaved layout
//! finds what an independent brute force over the flat rows finds.

use ltokit_ivf::data::synthetic;
use ltokit_ivf::gpu::{bundle, capacity, plan_names, MAX_K};
use ltokit_ivf::index::veclen;
use ltokit_ivf::kmeans::{assign_cpu, train, training_set, KMeansParams};
use ltokit_ivf::reference::scan_lists;
use ltokit_ivf::{DType, Filter, IvfIndex, Metric};

#[test]
fn every_variant_has_its_own_plans_with_the_right_fragments() {
    let b = bundle().unwrap();
    let target = "sm_90".parse().unwrap();
    let filters = [
        Filter::None,
        Filter::Bitset(vec![]),
        Filter::Bitmap {
            words: 0,
            bits: vec![],
        },
    ];
    let mut scans = std::collections::HashMap::new();
    for dtype in DType::ALL {
        for dim in [64, 30] {
            let width = veclen(dtype, dim);
            for metric in Metric::ALL {
                for filter in &filters {
                    for k in [1, 2, 10, 33, 100, 256, 300, 1024] {
                        let (scan, merge) = plan_names(dtype, width, metric, filter, k).unwrap();
                        let plan = b.plan(&scan, target).unwrap();
                        let cap = capacity(k).unwrap();
                        // The kernel of the capacity that holds k, and only it is linked.
                        let kernel = format!("ivf_scan_c{cap}_kernel");
                        assert_eq!(plan.kernel(), kernel);
                        assert!(plan.options().contains(&format!("-kernels-used={kernel}")));
                        // The plan links the fragments this variant needs: the scan entry,
                        // the distance of this type, width and metric, this metric and
                        // this filter.
                        let names: Vec<&str> =
                            plan.inputs().iter().map(|i| i.name.as_str()).collect();
                        assert!(cap >= k && cap < 2 * k.max(8), "capacity {cap} for k {k}");
                        let v = if width == 1 { "v1" } else { "vmax" };
                        assert_eq!(
                            names,
                            [
                                "scan".to_string(),
                                format!("dist_{}_{v}_{}", dtype.name(), metric.name()),
                                format!("metric_{}", metric.name()),
                                format!("filter_{}", filter.name()),
                            ],
                            "{scan}"
                        );
                        assert_eq!(
                            b.plan(&merge, target).unwrap().kernel(),
                            format!("ivf_merge_c{cap}_kernel")
                        );
                        // No two variants that differ in what they compute share a plan.
                        let variant = (dtype, width, metric, filter.name(), cap);
                        assert_eq!(
                            *scans.entry(scan.clone()).or_insert(variant),
                            variant,
                            "{scan}"
                        );
                    }
                }
            }
        }
    }
    assert!(capacity(0).is_err() && capacity(MAX_K + 1).is_err());
}

/// The distance each metric ranks by (smaller is nearer), written out here independently
/// of `Metric::score`: squared L2, L2, negative inner product, 1 − cosine similarity.
fn independent_distance(metric: Metric, q: &[f32], x: &[f32]) -> f64 {
    let (mut d2, mut dot, mut qq, mut xx) = (0f64, 0f64, 0f64, 0f64);
    for (&a, &b) in q.iter().zip(x) {
        let (a, b) = (f64::from(a), f64::from(b));
        d2 += (a - b) * (a - b);
        dot += a * b;
        qq += a * a;
        xx += b * b;
    }
    match metric {
        Metric::L2 => d2,
        Metric::L2Sqrt => d2.sqrt(),
        Metric::Ip => -dot,
        Metric::Cosine => 1.0 - dot / (qq.sqrt() * xx.sqrt()),
    }
}

#[test]
fn probing_every_list_finds_the_true_neighbours_through_the_interleaved_layout() {
    let dim = 12;
    let base = synthetic(600, dim, 6, DType::F32, 11);
    let ids: Vec<i64> = (0..600).map(|i| 1000 + 3 * i).collect();
    let params = KMeansParams {
        n_lists: 8,
        iters: 5,
        train_fraction: 0.5,
        seed: 3,
    };
    let flat = base.to_f32();
    for metric in Metric::ALL {
        let t = training_set(&base, &params, metric);
        let centers = train(&t, dim, &params, &mut |p, c| Ok(assign_cpu(p, c, dim))).unwrap();
        let assignment = assign_cpu(&flat, &centers, dim);
        let index = IvfIndex::from_assignment(metric, &base, &ids, centers, &assignment).unwrap();
        for qi in 0..10 {
            let q = synthetic(1, dim, 6, DType::F32, 100 + qi).row_f32(0);
            let all_lists: Vec<usize> = (0..8).collect();
            let found = scan_lists(&index, qi as usize, &q, &all_lists, 10, &Filter::None);
            // Truth from the flat rows and their ids, not from the index.
            let mut truth: Vec<(f64, i64)> = flat
                .chunks(dim)
                .zip(&ids)
                .map(|(x, &id)| (independent_distance(metric, &q, x), id))
                .collect();
            truth.sort_by(|a, b| a.0.total_cmp(&b.0));
            let want: Vec<i64> = truth[..10].iter().map(|t| t.1).collect();
            let got: Vec<i64> = found.iter().map(|h| h.0).collect();
            assert_eq!(got, want, "{metric:?} query {qi}");
            for (h, t) in found.iter().zip(&truth) {
                // Reported as the metric is named: the inner product itself for ip.
                let reported = if metric == Metric::Ip { -t.0 } else { t.0 };
                assert!(
                    (h.1 - reported).abs() < 1e-9 * reported.abs().max(1.0),
                    "{metric:?}: {} vs {reported}",
                    h.1
                );
            }
        }
    }
}

#[test]
fn prebuilt_bundle_matches_its_sources() {
    // Fails after a kernel source, header or the spec changed until
    // scripts/update-prebuilt.sh refreshes kernels/prebuilt/ivf.ltkb.
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = ltokit_build::check_prebuilt(
        &crate_dir.join("kernels/bundle.json"),
        &crate_dir.join("kernels/prebuilt/ivf.ltkb"),
    )
    .unwrap();
    assert_eq!(report.plans, bundle().unwrap().manifest().plans.len());
}

/// The kernel family of a plan: its name without the metric and filter fragments it links
/// (`lmscan_c1024_u8tc_cosine_bitmap` → `lmscan_c1024_u8tc`).
fn kernel_family(plan: &str) -> &str {
    let mut name = plan;
    for filter in ["_none", "_bitset", "_bitmap"] {
        name = name.strip_suffix(filter).unwrap_or(name);
    }
    for metric in ["_l2sqrt", "_l2", "_ip", "_cosine"] {
        if let Some(family) = name.strip_suffix(metric) {
            return family;
        }
    }
    name
}

/// A plan's top-k capacity (its `_c<N>` part) and its name with that part as `_c*`.
fn capacity_of(plan: &str) -> Option<(usize, String)> {
    plan.match_indices("_c").find_map(|(at, _)| {
        let rest = &plan[at + 2..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = &rest[digits..];
        let cap = rest[..digits].parse().ok()?;
        (after.is_empty() || after.starts_with('_'))
            .then(|| (cap, format!("{}_c*{after}", &plan[..at])))
    })
}

#[test]
fn every_kernel_of_the_largest_capacity_links_for_sm_90() {
    // A warp's top-k list lives in shared memory, so the largest capacity declares the most
    // of it; past 48 KiB of static shared memory ptxas refuses the kernel, which only a
    // link (not the bundle's build) finds: `coarse_select_c1024` failed so on the H100
    // until its blocks took four queries. One plan of each kernel family at its largest
    // capacity (1,024, or 32 for the small-k kernels: the register-capped scans and
    // the register-row selections; 8 for the short-row selections): the one with the
    // longest name (a filtered l2sqrt plan, where the family has filters and metrics).
    if ltokit_demo::skip_without_toolkit() {
        return;
    }
    let b = bundle().unwrap();
    let target = "sm_90".parse().unwrap();
    let mut families = std::collections::BTreeMap::<String, (usize, &str)>::new();
    for record in &b.manifest().plans {
        let name = record.name.as_str();
        let Some((cap, pattern)) = capacity_of(name) else {
            continue;
        };
        let chosen = families
            .entry(kernel_family(&pattern).to_string())
            .or_insert((cap, name));
        if (cap, name.len()) > (chosen.0, chosen.1.len()) {
            *chosen = (cap, name);
        }
    }
    // Every family of the bundle's scans, merges and coarse kernels is there, each at the
    // capacity it is written for.
    for (family, cap) in [
        ("scan_c*", MAX_K),
        ("lmscan_c*", MAX_K),
        ("lmscan_o3_c*", 32),
        ("merge_c*", MAX_K),
        ("coarse_c*", MAX_K),
        ("coarse_select_c*", MAX_K),
        ("coarse_select_rows_c*", 32),
        ("coarse_select_short_c*", 8),
    ] {
        assert!(
            families
                .iter()
                .any(|(f, &(c, _))| f.starts_with(family) && c == cap),
            "no {family} plan of capacity {cap}"
        );
    }
    let families: std::collections::BTreeMap<&str, &str> = families
        .iter()
        .map(|(f, &(_, name))| (f.as_str(), name))
        .collect();
    let failed: Vec<String> = families
        .values()
        .filter_map(|name| {
            let linked = b.plan(name, target).and_then(|plan| plan.link());
            linked.err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "plans that do not link:\n{}",
        failed.join("\n")
    );
    eprintln!(
        "linked {} plans, each family's at its largest capacity, for sm_90",
        families.len()
    );
}
