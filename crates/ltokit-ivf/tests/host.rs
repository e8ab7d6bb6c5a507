//! Host-side checks (CI, no GPU): every variant has a plan in the embedded bundle, and
//! the CPU reference path agrees with itself where it must.

use ltokit_ivf::data::synthetic;
use ltokit_ivf::gpu::{bundle, capacity, plan_names, MAX_K};
use ltokit_ivf::index::veclen;
use ltokit_ivf::kmeans::{assign_cpu, train, training_set, KMeansParams};
use ltokit_ivf::reference::{coarse, exact, recall, scan_lists};
use ltokit_ivf::{DType, Filter, IvfIndex, Metric};

#[test]
fn every_variant_has_its_plans() {
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
    let mut n = 0;
    for dtype in DType::ALL {
        for dim in [64, 30] {
            for metric in Metric::ALL {
                for filter in &filters {
                    for k in [1, 2, 10, 33, 100, 256, 300, 1024] {
                        let (scan, merge) =
                            plan_names(dtype, veclen(dtype, dim), metric, filter, k).unwrap();
                        let plan = b.plan(&scan, target).unwrap();
                        assert_eq!(plan.kernel(), "ivf_scan");
                        assert_eq!(plan.inputs().len(), 4, "entry, distance, metric, filter");
                        assert_eq!(b.plan(&merge, target).unwrap().kernel(), "ivf_merge");
                        n += 1;
                    }
                }
            }
        }
    }
    assert_eq!(n, 4 * 2 * 4 * 3 * 8);
    assert_eq!(capacity(10).unwrap(), 16);
    assert!(capacity(0).is_err() && capacity(MAX_K + 1).is_err());
}

#[test]
fn ivf_with_every_list_probed_is_exact_on_the_cpu() {
    let base = synthetic(600, 12, 6, DType::F32, 11);
    let params = KMeansParams {
        n_lists: 8,
        iters: 5,
        train_fraction: 0.5,
        seed: 3,
    };
    for metric in Metric::ALL {
        let t = training_set(&base, &params, metric);
        let centers = train(&t, 12, &params, &mut |p, c| Ok(assign_cpu(p, c, 12))).unwrap();
        let assignment = assign_cpu(&base.to_f32(), &centers, 12);
        let index = IvfIndex::from_assignment(
            metric,
            &base,
            &(0..600).collect::<Vec<_>>(),
            centers,
            &assignment,
        )
        .unwrap();
        let flat = base.to_f32();
        for qi in 0..10 {
            let q = base.row_f32(qi * 7);
            let lists: Vec<usize> = coarse(&index, &q, 8).iter().map(|(l, _)| *l).collect();
            let ivf = scan_lists(&index, qi, &q, &lists, 10, &Filter::None);
            let truth = exact(metric, &flat, 12, &q, 10);
            let a: Vec<i64> = ivf.iter().map(|h| h.0).collect();
            let b: Vec<i64> = truth.iter().map(|h| h.0).collect();
            assert_eq!(recall(&[a], &[b], 10), 1.0, "{metric:?}");
        }
    }
}
