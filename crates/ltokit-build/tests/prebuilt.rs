//! Prebuilt bundles: `check_prebuilt` accepts a bundle built from the current sources and
//! names what changed otherwise. Building the bundle needs NVRTC (skipped without it).

use std::path::{Path, PathBuf};

use ltokit::Error;

#[path = "../../ltokit/tests/support/scratch.rs"]
mod scratch;
use scratch::scratch_dir;

/// A new, empty folder, removed when the test ends.
fn scratch(tag: &str) -> PathBuf {
    scratch_dir(&format!("ltokit-build-{tag}-"))
}

/// A copy of the demo kernels and spec in `dir`; returns the spec's path.
fn demo_spec(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ltokit-demo/kernels/demo");
    for f in ["entry.cu", "transform.cu", "combine.cu", "bundle.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    dir.join("bundle.json")
}

fn stale_reason(spec: &Path, prebuilt: &Path) -> String {
    match ltokit_build::check_prebuilt(spec, prebuilt) {
        Err(Error::StalePrebuilt { why, .. }) => why,
        other => panic!("expected a stale prebuilt bundle, got {other:?}"),
    }
}

#[test]
fn fresh_prebuilt_is_accepted_and_every_kind_of_change_is_named() {
    if ltokit_demo::skip_without_toolkit() {
        return;
    }
    let dir = scratch("fresh");
    let spec = demo_spec(&dir);
    let prebuilt = dir.join("prebuilt.ltkb");
    ltokit_build::build_bundle(&spec, &prebuilt, 2).unwrap();
    let report = ltokit_build::check_prebuilt(&spec, &prebuilt).unwrap();
    assert_eq!(report.plans, 96);

    // A source edit: the fragments compiled from it are named.
    let transform = dir.join("transform.cu");
    let original = std::fs::read_to_string(&transform).unwrap();
    std::fs::write(&transform, format!("{original}\n// edited\n")).unwrap();
    assert!(
        stale_reason(&spec, &prebuilt).contains("fragment transform_x1 "),
        "{}",
        stale_reason(&spec, &prebuilt)
    );
    std::fs::write(&transform, &original).unwrap();
    ltokit_build::check_prebuilt(&spec, &prebuilt).unwrap();

    // A header beside the sources is part of every fragment's inputs.
    std::fs::write(dir.join("extra.cuh"), "#pragma once\n").unwrap();
    assert!(stale_reason(&spec, &prebuilt).contains("fragment entry "));
    std::fs::remove_file(dir.join("extra.cuh")).unwrap();

    // A plan option in the spec.
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replace("\"-{opt}\"", "\"-{opt}\", \"-lineinfo\""),
    )
    .unwrap();
    assert!(stale_reason(&spec, &prebuilt).contains("plans differ"));

    // Nothing is checked against a file that is not a bundle.
    std::fs::write(&prebuilt, b"not a bundle").unwrap();
    assert!(ltokit_build::check_prebuilt(&spec, &prebuilt).is_err());
}

#[test]
fn a_fragment_compiled_for_a_newer_target_links_only_where_its_plans_allow() {
    if ltokit_demo::skip_without_toolkit() {
        return;
    }
    let dir = scratch("fragment-target");
    // `__reduce_add_sync` exists from sm_80 on: the fragment compiles only for its own
    // target, so a build that succeeds compiled it for sm_80 and the rest for sm_75.
    std::fs::write(
        dir.join("e.cu"),
        "extern \"C\" __device__ unsigned twice(unsigned v);\n\
         extern \"C\" __global__ void k(unsigned* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("t.cu"),
        "#if defined(USE_REDUCE)\n\
         extern \"C\" __device__ unsigned twice(unsigned v) { return __reduce_add_sync(0xffffffffu, v) + v; }\n\
         #else\n\
         extern \"C\" __device__ unsigned twice(unsigned v) { return 2 * v; }\n\
         #endif\n",
    )
    .unwrap();
    let spec = dir.join("bundle.json");
    std::fs::write(
        &spec,
        r#"{ "name": "targets", "target": "sm_75",
            "fragments": [
                { "name": "e", "role": "entry", "source": "e.cu", "exports": ["k"], "requires": ["twice"] },
                { "name": "plain", "source": "t.cu", "exports": ["twice"] },
                { "name": "reduce", "source": "t.cu", "defines": { "USE_REDUCE": "1" }, "exports": ["twice"], "target": "sm_80" }
            ],
            "plans": [
                { "name": "p_plain", "kernel": "k", "entry": "e", "fragments": ["plain"] },
                { "name": "p_reduce", "kernel": "k", "entry": "e", "fragments": ["reduce"], "min_arch": 80 }
            ] }"#,
    )
    .unwrap();
    let out = dir.join("targets.ltkb");
    ltokit_build::build_bundle(&spec, &out, 2).unwrap();
    ltokit_build::check_prebuilt(&spec, &out).unwrap();
    let bundle = ltokit::bundle::Bundle::open(&out).unwrap();
    let target_of = |name: &str| {
        let f = &bundle.manifest().fragments[bundle.fragment_index(name).unwrap()];
        f.target.clone()
    };
    assert_eq!(target_of("reduce"), "lto_80");
    assert_eq!(target_of("plain"), "lto_75");
    // The sm_80 plan links for sm_90 and is refused for sm_75; the other links for both.
    let sm = |s: &str| s.parse::<ltokit::Target>().unwrap();
    assert!(!bundle
        .plan("p_reduce", sm("sm_90"))
        .unwrap()
        .link()
        .unwrap()
        .cubin
        .is_empty());
    let err = bundle
        .plan("p_reduce", sm("sm_75"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs sm_80 or newer"), "{err}");
    bundle.plan("p_plain", sm("sm_75")).unwrap().link().unwrap();
    // The fragment's target is part of its compile key.
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replace(r#""target": "sm_80""#, r#""target": "sm_86""#)
            .replace(r#""min_arch": 80"#, r#""min_arch": 86"#),
    )
    .unwrap();
    assert!(
        stale_reason(&spec, &out).contains("fragment reduce "),
        "{}",
        stale_reason(&spec, &out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fresh_prebuilt_bundle_is_provided_byte_for_byte_and_a_stale_one_rebuilt() {
    if ltokit_demo::skip_without_toolkit() {
        return;
    }
    let dir = scratch("provide");
    let spec = demo_spec(&dir);
    let prebuilt = dir.join("prebuilt.ltkb");
    ltokit_build::build_bundle(&spec, &prebuilt, 2).unwrap();
    // An output left by an earlier build is replaced by the checked-in bundle itself, so
    // that caches warmed from it hit: NVRTC is not run again.
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("bundle.ltkb");
    std::fs::write(&out, b"an earlier build's bundle").unwrap();
    let provided = ltokit_build::build_or_prebuilt(&spec, &prebuilt, &out, 2).unwrap();
    assert!(matches!(
        provided,
        ltokit_build::Provenance::Prebuilt { .. }
    ));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&prebuilt).unwrap()
    );

    // A source edit: the prebuilt bundle is stale, so the bundle is built with NVRTC and
    // matches the edited sources.
    let transform = dir.join("transform.cu");
    let original = std::fs::read_to_string(&transform).unwrap();
    std::fs::write(&transform, format!("{original}\n// edited\n")).unwrap();
    let provided = ltokit_build::build_or_prebuilt(&spec, &prebuilt, &out, 2).unwrap();
    assert!(matches!(provided, ltokit_build::Provenance::Built(_)));
    ltokit_build::check_prebuilt(&spec, &out).unwrap();
    assert!(ltokit_build::check_prebuilt(&spec, &prebuilt).is_err());
}
