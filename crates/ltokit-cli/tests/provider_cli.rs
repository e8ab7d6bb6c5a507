//! Providers, the audit and plan requirements through the `ltokit` command (no GPU).

mod common;

use std::path::Path;

use common::{bench_cache, demo_spec, repo, run, text, toolkit_scratch};

/// A copy of the demo bundle spec with two extra plans that declare requirements.
fn bundle_with_requirements(dir: &Path) -> String {
    let spec = demo_spec(
        dir,
        "req",
        r#"
        { "name": "plain", "kernel": "ltk_demo", "entry": "entry", "fragments": ["transform", "combine"] },
        { "name": "needs_sm100", "kernel": "ltk_demo", "entry": "entry", "fragments": ["transform", "combine"], "options": ["-O0"], "min_arch": 100 },
        { "name": "needs_a", "kernel": "ltk_demo", "entry": "entry", "fragments": ["transform", "combine"], "arch_specific": true }"#,
    );
    let out = dir.join("req.ltkb");
    let o = run(
        &[
            "bundle",
            "build",
            spec.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    out.to_str().unwrap().to_string()
}

#[test]
fn provider_serves_strict_mode_without_nvjitlink_and_skips_what_the_target_cannot_run() {
    let Some(dir) = toolkit_scratch("serve") else {
        return;
    };
    let bundle = bundle_with_requirements(&dir);
    let prov = dir.join("req-sm90.ltkp");
    let o = run(
        &[
            "provider",
            "build",
            "--bundle",
            &bundle,
            "--target",
            "sm_90",
            "-o",
            prov.to_str().unwrap(),
            "--jobs",
            "2",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("1 cubins for sm_90"), "{out}");
    assert!(
        out.contains("skipped needs_sm100") && out.contains("skipped needs_a"),
        "{out}"
    );
    let o = run(&["provider", "verify", prov.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &["provider", "inspect", "--json", prov.to_str().unwrap()],
        &[],
    );
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["target"], "sm_90");
    assert_eq!(m["entries"].as_array().unwrap().len(), 1);

    let strict = [
        ("LTOKIT_JIT", "off"),
        ("LTOKIT_CACHE", "off"),
        ("LTOKIT_PROVIDER_PATH", prov.to_str().unwrap()),
    ];
    let o = bench_cache(
        &bundle,
        "plain",
        "sm_90",
        &["--iters", "5", "--json"],
        &strict,
    );
    assert!(o.status.success(), "{}", text(&o));
    let b: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(b["level"], "provider");
    assert_eq!(
        b["nvjitlink_loaded"], false,
        "a provider-served process must not load nvJitLink"
    );
    // A plan the target cannot run: the request names the plan, the target and the
    // requirement, in strict mode and with linking allowed alike.
    for env in [&strict[..], &[("LTOKIT_CACHE", "off")][..]] {
        let o = bench_cache(&bundle, "needs_sm100", "sm_90", &["--iters", "1"], env);
        assert!(!o.status.success());
        assert!(
            text(&o).contains("plan needs_sm100 cannot run on sm_90: it needs sm_100 or newer"),
            "{}",
            text(&o)
        );
    }
    // Matching by the device's compute capability: an sm_90 provider serves 9.0 (also a
    // request made for sm_90a), never 8.x or another major.
    let o = bench_cache(
        &bundle,
        "plain",
        "sm_90a",
        &["--iters", "1", "--json"],
        &strict,
    );
    assert!(o.status.success(), "{}", text(&o));
    for arch in ["sm_80", "sm_100"] {
        let o = bench_cache(&bundle, "plain", arch, &["--iters", "1"], &strict);
        assert!(!o.status.success(), "{arch}: {}", text(&o));
        assert!(text(&o).contains("no provider for"), "{arch}: {}", text(&o));
    }
    // A damaged provider is refused with a clear error, never used.
    let mut bytes = std::fs::read(&prov).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xff;
    let bad = dir.join("bad.ltkp");
    std::fs::write(&bad, bytes).unwrap();
    let o = run(&["provider", "verify", bad.to_str().unwrap()], &[]);
    assert!(
        !o.status.success() && text(&o).contains("corrupt"),
        "{}",
        text(&o)
    );
    let o = bench_cache(
        &bundle,
        "plain",
        "sm_90",
        &["--iters", "1"],
        &[
            ("LTOKIT_JIT", "off"),
            ("LTOKIT_CACHE", "off"),
            ("LTOKIT_PROVIDER_PATH", bad.to_str().unwrap()),
        ],
    );
    assert!(
        !o.status.success(),
        "a corrupt provider must not serve: {}",
        text(&o)
    );
}

#[test]
fn audit_rejects_ptx_and_foreign_targets_and_accepts_a_clean_provider() {
    let Some(dir) = toolkit_scratch("audit") else {
        return;
    };
    let bundle = bundle_with_requirements(&dir);
    let prov = dir.join("p.ltkp");
    assert!(run(
        &[
            "provider",
            "build",
            "--bundle",
            &bundle,
            "--target",
            "sm_90a",
            "-o",
            prov.to_str().unwrap()
        ],
        &[]
    )
    .status
    .success());
    let o = run(
        &[
            "check",
            "--targets",
            "sm_90,sm_90a",
            "--kinds",
            "cubin",
            prov.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The nvcc-built shared library carries PTX and sm_75 code.
    let lib = repo().join("tests/fixtures/libsmall.so");
    let o = run(
        &[
            "check",
            "--targets",
            "sm_90",
            "--kinds",
            "cubin",
            lib.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o);
    assert!(
        out.contains("kind ptx is not allowed") && out.contains("target sm_75 is not allowed"),
        "{out}"
    );
    // The size budget.
    let o = run(
        &[
            "check",
            "--targets",
            "sm_90a",
            "--max-bytes",
            "100",
            prov.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("over the budget"), "{}", text(&o));
}

#[test]
fn install_minimal_has_no_implicit_fallback_and_promote_from_cache_works() {
    let Some(dir) = toolkit_scratch("install") else {
        return;
    };
    let bundle = bundle_with_requirements(&dir);
    let p90 = dir.join("p90.ltkp");
    let p80 = dir.join("p80.ltkp");
    for (t, p) in [("sm_90", &p90), ("sm_80", &p80)] {
        assert!(run(
            &[
                "provider",
                "build",
                "--bundle",
                &bundle,
                "--target",
                t,
                "-o",
                p.to_str().unwrap()
            ],
            &[]
        )
        .status
        .success());
    }
    let data = dir.join("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let o = run(
        &[
            "provider",
            "install",
            "--minimal",
            p90.to_str().unwrap(),
            p80.to_str().unwrap(),
        ],
        &env,
    );
    assert!(
        o.status.success() && text(&o).contains("no implicit fallback"),
        "{}",
        text(&o)
    );
    let o = run(
        &[
            "provider",
            "install",
            "--minimal",
            "--target",
            "sm_90",
            p90.to_str().unwrap(),
            p80.to_str().unwrap(),
        ],
        &env,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(data.join("ltokit/providers/p90.ltkp").is_file());
    assert!(!data.join("ltokit/providers/p80.ltkp").exists());
    let o = run(&["provider", "list"], &env);
    assert!(
        text(&o).contains("p90.ltkp") && text(&o).contains("sm_90"),
        "{}",
        text(&o)
    );

    // Promote a cache: what `warmup` linked becomes a provider. Warm-up links only the
    // plan sm_90 can run and lists the two it cannot.
    let cache = dir.join("cache");
    let o = run(
        &[
            "warmup",
            "--bundle",
            &bundle,
            "--arch",
            "sm_90",
            "--cache-dir",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("1 plans for sm_90: 1 linked"), "{out}");
    assert!(
        out.contains("skipped needs_sm100: needs sm_100 or newer")
            && out.contains("skipped needs_a: needs an arch-specific target (sm_90a)"),
        "{out}"
    );
    let promoted = dir.join("promoted.ltkp");
    let promote = |target: &str| {
        run(
            &[
                "provider",
                "build",
                "--from-cache",
                "--cache-dir",
                cache.to_str().unwrap(),
                "--target",
                target,
                "-o",
                promoted.to_str().unwrap(),
            ],
            &[],
        )
    };
    let o = promote("sm_90");
    assert!(o.status.success(), "{}", text(&o));
    // Only "plain": the plans sm_90 cannot run were never linked.
    assert!(text(&o).contains("1 cubins for sm_90"), "{}", text(&o));
    let o = promote("sm_80");
    assert!(
        !o.status.success() && text(&o).contains("no entry for sm_80"),
        "{}",
        text(&o)
    );
}
