//! The cache across processes, through the `ltokit` command: concurrent processes,
//! writers killed mid-publish, maintenance commands, warm-up and strict mode. Needs the
//! CUDA compiler libraries (real nvJitLink links), no GPU.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{bench_cache, command, repo, run, scratch, stderr, stdout, toolkit_scratch};
use std::time::Duration;

/// Compiles the demo fragments to LTO-IR files in `dir`; returns their paths.
fn demo_inputs(dir: &Path) -> Vec<String> {
    let kernels = repo().join("crates/ltokit-demo/kernels/demo");
    ["entry", "transform", "combine"]
        .iter()
        .map(|name| {
            let out = dir.join(format!("{name}.ltoir"));
            let o = run(
                &[
                    "compile",
                    "--arch",
                    "sm_75",
                    kernels.join(format!("{name}.cu")).to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                ],
                &[],
            );
            assert!(o.status.success(), "{}", stderr(&o));
            out.to_str().unwrap().to_string()
        })
        .collect()
}

fn link_args<'a>(inputs: &'a [String], cache: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut a = vec!["link", "--arch", "sm_90", "--cache-dir", cache];
    a.extend(inputs.iter().map(String::as_str));
    a.extend(["-o", out]);
    a
}

fn stats(cache: &str) -> serde_json::Value {
    let o = run(&["cache", "stats", "--json", "--cache-dir", cache], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn sixteen_processes_one_key_one_link() {
    let Some(dir) = toolkit_scratch("sixteen") else {
        return;
    };
    let inputs = demo_inputs(&dir);
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let outs: Vec<String> = (0..16)
        .map(|i| {
            dir.join(format!("out{i}.cubin"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let children: Vec<_> = outs
        .iter()
        .map(|out| {
            command(&link_args(&inputs, cache, out), &[])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let first = std::fs::read(&outs[0]).unwrap();
    for out in &outs {
        assert_eq!(std::fs::read(out).unwrap(), first, "{out} differs");
    }
    let s = stats(cache);
    assert_eq!(
        s["counters"]["links"], 1,
        "16 processes must link once: {s}"
    );
    assert_eq!(s["counters"]["l2_hits"], 15, "{s}");
    assert_eq!(s["entries"], 1);
}

#[test]
fn writers_killed_mid_publish_never_leave_a_torn_entry() {
    let Some(dir) = toolkit_scratch("kill") else {
        return;
    };
    let inputs = demo_inputs(&dir);
    let cache_dir = dir.join("cache");
    let cache = cache_dir.to_str().unwrap();
    let reference = dir.join("reference.cubin");
    let mut args = link_args(&inputs, cache, reference.to_str().unwrap());
    args.push("--no-cache");
    assert!(run(&args, &[]).status.success());
    let reference = std::fs::read(&reference).unwrap();

    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut killed_with_entry = 0;
    for round in 0..24 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let out = dir.join(format!("k{round}.cubin"));
        let mut child = command(
            &link_args(&inputs, cache, out.to_str().unwrap()),
            &[("LTOKIT_FAULT_PUBLISH_PAUSE_MS", "40")],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        // Anywhere from before the link to after the rename.
        std::thread::sleep(Duration::from_millis(state % 220));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // Readers see either nothing or a complete, verified entry.
        let o = run(&["cache", "verify", "--cache-dir", cache], &[]);
        assert!(
            o.status.success(),
            "round {round}: torn entry found: {}",
            stdout(&o)
        );
        if stats(cache)["entries"] == 1 {
            killed_with_entry += 1;
            let o = run(&["cache", "clear", "--cache-dir", cache], &[]);
            assert!(o.status.success());
        }
    }
    // The next request relinks (or reads) and gives the right bytes.
    let out = dir.join("final.cubin");
    assert!(run(&link_args(&inputs, cache, out.to_str().unwrap()), &[])
        .status
        .success());
    assert_eq!(std::fs::read(out).unwrap(), reference);
    assert!(
        killed_with_entry < 24,
        "every kill came after the publish; the test did not exercise torn writes"
    );
}

#[test]
fn maintenance_commands() {
    let Some(dir) = toolkit_scratch("maint") else {
        return;
    };
    let inputs = demo_inputs(&dir);
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    for opt in ["-O3", "-O0"] {
        let mut a = link_args(&inputs, cache, "/dev/null");
        a.extend(["--opt", opt]);
        assert!(run(&a, &[]).status.success());
    }
    assert_eq!(stats(cache)["entries"], 2);
    let ls = run(&["cache", "ls", "--json", "--cache-dir", cache], &[]);
    let listed: serde_json::Value = serde_json::from_slice(&ls.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);

    // Damage one entry: verify removes it and exits 1; a second verify is clean.
    let victim = listed[0]["path"].as_str().unwrap();
    let mut bytes = std::fs::read(victim).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(victim, bytes).unwrap();
    let o = run(&["cache", "verify", "--cache-dir", cache], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("digest mismatch"));
    assert!(run(&["cache", "verify", "--cache-dir", cache], &[])
        .status
        .success());
    assert_eq!(stats(cache)["counters"]["corrupt"], 1);

    assert!(run(
        &["cache", "prune", "--max-bytes", "0", "--cache-dir", cache],
        &[]
    )
    .status
    .success());
    assert_eq!(stats(cache)["entries"], 0);
    assert_eq!(stats(cache)["counters"]["evictions"], 1);
    let o = run(
        &[
            "cache",
            "prune",
            "--max-bytes",
            "lots",
            "--cache-dir",
            cache,
        ],
        &[],
    );
    assert!(stderr(&o).contains("not a size"));
}

#[test]
fn warmup_fills_the_cache_and_strict_mode_uses_it() {
    let Some(dir) = toolkit_scratch("warm") else {
        return;
    };
    let bundle = repo().join("tests/fixtures/ltk-demo.ltkb");
    let bundle = bundle.to_str().unwrap();
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    // Strict mode before warm-up: a clear error naming the plan.
    let o = bench_cache(
        bundle,
        "demo_max_x4_O3",
        "sm_90",
        &["--iters", "1", "--cache-dir", cache],
        &[("LTOKIT_JIT", "off")],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("LTOKIT_JIT=off") && err.contains("demo_max_x4_O3") && err.contains("sm_90"),
        "{err}"
    );

    let o = run(
        &[
            "warmup",
            "--bundle",
            bundle,
            "--arch",
            "sm_90",
            "--jobs",
            "2",
            "--json",
            "--cache-dir",
            cache,
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["plans"], 96);
    assert_eq!(report["linked"], 96);
    assert_eq!(stats(cache)["entries"], 96);
    let o = run(
        &[
            "warmup",
            "--bundle",
            bundle,
            "--arch",
            "sm_90",
            "--json",
            "--cache-dir",
            cache,
        ],
        &[],
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["cached"], 96);

    // Strict mode after warm-up: served from disk, nvJitLink never loaded.
    let o = bench_cache(
        bundle,
        "demo_max_x4_O3",
        "sm_90",
        &["--iters", "10", "--json", "--cache-dir", cache],
        &[("LTOKIT_JIT", "off")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bench: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(bench["level"], "l2");
    assert_eq!(bench["nvjitlink_loaded"], false, "{bench}");
    // LTOKIT_CACHE=off: nothing on disk to use, so strict mode fails again.
    let o = bench_cache(
        bundle,
        "demo_max_x4_O3",
        "sm_90",
        &["--iters", "1"],
        &[("LTOKIT_JIT", "off"), ("LTOKIT_CACHE", "off")],
    );
    assert!(stderr(&o).contains("disk cache off"), "{}", stderr(&o));
}

#[test]
fn strict_mode_serves_a_warm_cache_with_no_compiler_libraries_at_all() {
    let Some(dir) = toolkit_scratch("nolibs") else {
        return;
    };
    let inputs = demo_inputs(&dir);
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let first = dir.join("first.cubin");
    let o = run(&link_args(&inputs, cache, first.to_str().unwrap()), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A deployment with the prepared cache and no CUDA compiler library anywhere.
    let empty = scratch("empty-lib-dir");
    let no_libs = [
        ("LTOKIT_CUDA_LIB_DIR", empty.to_str().unwrap()),
        ("LTOKIT_JIT", "off"),
    ];
    let second = dir.join("second.cubin");
    let o = run(
        &link_args(&inputs, cache, second.to_str().unwrap()),
        &no_libs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("disk cache"), "{}", stdout(&o));
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
    // Not cached and nothing to link with: the error says both.
    let other = dir.join("other.cubin");
    let mut args = link_args(&inputs, cache, other.to_str().unwrap());
    args.extend(["--opt", "-O0"]);
    let o = run(&args, &no_libs);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("LTOKIT_JIT=off") && err.contains("no nvJitLink here"),
        "{err}"
    );
    // Linking allowed but no nvJitLink: the missing library is the error.
    let o = run(&args, &no_libs[..1]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("nvJitLink was not found"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bundles_rebuild_only_what_changed() {
    let Some(dir) = toolkit_scratch("rebuild") else {
        return;
    };
    let src = repo().join("crates/ltokit-demo/kernels/demo");
    for f in ["entry.cu", "transform.cu", "combine.cu", "bundle.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let spec = dir.join("bundle.json");
    let out = dir.join("b.ltkb");
    let build = || {
        let o = run(
            &[
                "bundle",
                "build",
                spec.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--jobs",
                "2",
            ],
            &[],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(build().contains("(20 compiled, 0 reused)"));
    assert!(build().contains("(0 compiled, 20 reused)"));
    let combine = std::fs::read_to_string(dir.join("combine.cu")).unwrap();
    std::fs::write(
        dir.join("combine.cu"),
        combine.replace("fmaxf(t, y)", "fmaxf(y, t)"),
    )
    .unwrap();
    assert!(
        build().contains("(3 compiled, 17 reused)"),
        "only the three combine fragments changed"
    );
    let o = run(&["bundle", "inspect", "--json", out.to_str().unwrap()], &[]);
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(m["plans"].as_array().unwrap().len(), 96);
    // A broken source is a compile error naming the fragment and carrying NVRTC's log.
    std::fs::write(dir.join("combine.cu"), "this is not CUDA").unwrap();
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
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("combine_") && err.contains("error"),
        "{err}"
    );
}

#[test]
fn imported_cubins_serve_their_plan() {
    let Some(dir) = toolkit_scratch("import") else {
        return;
    };
    let inputs = demo_inputs(&dir);
    let bundle = repo().join("tests/fixtures/ltk-demo.ltkb");
    let bundle = bundle.to_str().unwrap();
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let cubin = |arch: &str| {
        let out = dir.join(format!("{arch}.cubin"));
        let mut a = vec!["link", "--no-cache", "--arch", arch];
        a.extend(inputs.iter().map(String::as_str));
        a.extend(["-o", out.to_str().unwrap()]);
        assert!(run(&a, &[]).status.success());
        out.to_str().unwrap().to_string()
    };
    let import = |file: &str| {
        run(
            &[
                "cache",
                "import",
                "--bundle",
                bundle,
                "--plan",
                "demo_max_x4_O3",
                "--arch",
                "sm_90",
                file,
                "--cache-dir",
                cache,
            ],
            &[],
        )
    };
    let wrong = import(&cubin("sm_80"));
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("not sm_90"), "{}", stderr(&wrong));
    let ok = import(&cubin("sm_90"));
    assert!(ok.status.success(), "{}", stderr(&ok));
    // Strict mode: the plan is served from the imported entry, nothing is linked.
    let o = bench_cache(
        bundle,
        "demo_max_x4_O3",
        "sm_90",
        &["--iters", "1", "--json", "--cache-dir", cache],
        &[("LTOKIT_JIT", "off")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bench: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(bench["level"], "l2");
}
