//! The bundle format: round trip, lazy verified payloads, and rejection of damaged files.

use ltokit::bundle::{Bundle, FragmentRecord, PlanRecord, Role};
use ltokit::digest::Digest;
use ltokit::version::Version;

fn record(name: &str, role: Role) -> FragmentRecord {
    FragmentRecord {
        name: name.into(),
        role,
        exports: vec![format!("{name}_fn")],
        requires: vec![],
        producer: Version::new(13, 0),
        target: "lto_75".into(),
        content_hash: Digest::of(b""),
        compile_key: Digest::of(name.as_bytes()),
        block: 0,
        offset: 0,
        raw_bytes: 0,
    }
}

fn sample() -> Vec<u8> {
    let ir = |tag: &[u8]| {
        let mut v = vec![0xed, 0x43, 0x4e, 0x7f, 1, 65];
        v.extend(std::iter::repeat_n(tag[0], 3000));
        v
    };
    let (e, d) = (ir(b"e"), ir(b"d"));
    let plans = vec![PlanRecord {
        name: "p".into(),
        kernel: "entry_fn".into(),
        entry: "entry".into(),
        fragments: vec!["dev".into()],
        options: vec!["-O3".into()],
        ..Default::default()
    }];
    let mut entry = record("entry", Role::Entry);
    entry.requires = vec!["dev_fn".into()];
    Bundle::write(
        "t",
        vec![entry, record("dev", Role::Device)],
        plans,
        &[&e, &d],
    )
    .unwrap()
}

#[test]
fn plans_that_cannot_link_are_refused_when_written() {
    let ir = [0xed, 0x43, 0x4e, 0x7f, 1, 65, 0];
    let write = |entry_requires: &[&str], kernel: &str, fragments: &[&str]| {
        let mut entry = record("entry", Role::Entry);
        entry.requires = entry_requires.iter().map(|s| s.to_string()).collect();
        let plans = vec![PlanRecord {
            name: "scan_f32".into(),
            kernel: kernel.into(),
            entry: "entry".into(),
            fragments: fragments.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }];
        Bundle::write(
            "t",
            vec![
                entry,
                record("dev", Role::Device),
                record("other", Role::Device),
            ],
            plans,
            &[&ir, &ir, &ir],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    assert!(write(&["dev_fn"], "entry_fn", &["dev"]).is_ok());
    // The fragment that defines a required symbol is missing from the plan.
    let err = write(&["dev_fn"], "entry_fn", &["other"]).unwrap_err();
    assert!(
        err.contains("plan scan_f32: fragment entry requires dev_fn, which none of its fragments [entry, other] exports"),
        "{err}"
    );
    // A misspelt kernel name.
    let err = write(&[], "entry_fm", &[]).unwrap_err();
    assert!(
        err.contains("plan scan_f32: its entry fragment entry does not export the kernel entry_fm"),
        "{err}"
    );
}

#[test]
fn round_trip_and_plans() {
    let bytes = sample();
    let b = Bundle::from_bytes("t.ltkb", bytes).unwrap();
    assert_eq!(b.manifest().fragments.len(), 2);
    let raw = b.fragment_bytes(1).unwrap();
    assert_eq!(raw.len(), 3006);
    assert_eq!(Digest::of(&raw), b.manifest().fragments[1].content_hash);
    let plan = b.plan("p", "sm_90a".parse().unwrap()).unwrap();
    assert_eq!(plan.inputs().len(), 2);
    assert_eq!(plan.target().to_string(), "sm_90a");
    assert_eq!(plan.inputs()[0].name, "entry");
    assert!(b
        .plan("nope", "sm_90".parse().unwrap())
        .unwrap_err()
        .to_string()
        .contains("no plan \"nope\""));
}

#[test]
fn damaged_bundles_are_clear_errors() {
    let good = sample();
    // Truncation anywhere is caught at open.
    for len in [0, 7, 63, 64, 100, good.len() - 1] {
        let err = Bundle::from_bytes("cut.ltkb", good[..len].to_vec())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cut.ltkb") && err.contains("malformed"),
            "{len}: {err}"
        );
    }
    // Manifest damage: digest mismatch.
    let mut bad = good.clone();
    bad[70] ^= 1;
    assert!(Bundle::from_bytes("m.ltkb", bad)
        .unwrap_err()
        .to_string()
        .contains("digest"));
    // Another format version.
    let mut bad = good.clone();
    bad[8] = 9;
    assert!(Bundle::from_bytes("v.ltkb", bad)
        .unwrap_err()
        .to_string()
        .contains("format version 9"));
    // Payload damage: opens (payloads are lazy) but the fragment is refused on use.
    let mut bad = good.clone();
    let last = bad.len() - 5;
    bad[last] ^= 0xff;
    let b = Bundle::from_bytes("p.ltkb", bad).unwrap();
    assert!(b.fragment_bytes(1).is_err());
}

#[test]
fn inconsistent_manifests_are_refused_when_written() {
    let ir = [0xed, 0x43, 0x4e, 0x7f, 1, 65];
    let plan = |entry: &str| {
        vec![PlanRecord {
            name: "p".into(),
            kernel: "k".into(),
            entry: entry.into(),
            fragments: vec![],
            options: vec![],
            ..Default::default()
        }]
    };
    let err = Bundle::write("t", vec![record("d", Role::Device)], plan("d"), &[&ir])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an entry"), "{err}");
    let err = Bundle::write("t", vec![record("e", Role::Entry)], plan("missing"), &[&ir])
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown entry"), "{err}");
    let err = Bundle::write(
        "t",
        vec![record("e", Role::Entry), record("e", Role::Device)],
        vec![],
        &[&ir, &ir],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("twice"), "{err}");
}

#[test]
fn kernels_used_options_must_name_the_kernel_and_no_prefix_of_another() {
    let ir = [0xed, 0x43, 0x4e, 0x7f, 1, 65, 0];
    let write = |kernel: &str, options: &[&str]| {
        let mut entry = record("entry", Role::Entry);
        entry.exports = vec!["scan_c1".into(), "scan_c16".into(), "scan_c2_kernel".into()];
        let plans = vec![PlanRecord {
            name: "p".into(),
            kernel: kernel.into(),
            entry: "entry".into(),
            options: options.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }];
        Bundle::write("t", vec![entry], plans, &[&ir])
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert!(write("scan_c2_kernel", &["-O3", "-kernels-used=scan_c2_kernel"]).is_ok());
    assert!(write("scan_c16", &["-kernels-used=scan_c16"]).is_ok());
    let err = write("scan_c1", &["-kernels-used=scan_c1"]).unwrap_err();
    assert!(
        err.contains(
            "-kernels-used=scan_c1 also keeps scan_c16 (nvJitLink matches kernel names by prefix)"
        ),
        "{err}"
    );
    let err = write("scan_c16", &["-kernels-used=scan_c2_kernel"]).unwrap_err();
    assert!(err.contains("leave out its own kernel scan_c16"), "{err}");
}
