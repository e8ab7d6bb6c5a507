//! Prebuilt bundles: `check_prebuilt` accepts a bundle built from the current sources and
//! names what changed otherwise. Building the bundle needs NVRTC (skipped without it).

use std::path::{Path, PathBuf};

use ltokit::Error;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ltokit-build-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
