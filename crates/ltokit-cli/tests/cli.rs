//! The `ltokit` command as a user runs it. Needs the CUDA compiler libraries
//! (scripts/setup-cuda.sh), not a GPU.

mod common;

use std::path::Path;
use std::process::Output;

use common::{command, demo_spec, repo, run, scratch, stderr, stdout, toolkit_scratch};

fn ltokit(args: &[&str]) -> Output {
    run(args, &[])
}

#[test]
fn doctor_reports_every_library_with_path_and_version() {
    if ltokit_demo::skip_without_toolkit() {
        return;
    }
    let out = ltokit(&["doctor", "--json"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let libs = report["libraries"].as_array().unwrap();
    let names: Vec<&str> = libs.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["NVRTC", "nvJitLink", "nvFatbin"]);
    for lib in libs {
        assert_eq!(lib["found"], true, "{lib}");
        assert_eq!(lib["version"]["major"], 13, "{lib}");
        assert!(
            Path::new(lib["path"].as_str().unwrap()).is_absolute(),
            "{lib}"
        );
    }
    let text = stdout(&ltokit(&["doctor"]));
    assert!(
        text.contains("nvJitLink") && text.contains("GPUs:"),
        "{text}"
    );
}

#[test]
fn missing_libraries_are_reported_with_what_was_searched() {
    let empty = scratch("nolibs");
    let empty_dir = empty.to_str().unwrap();
    let out = run(&["doctor", "--json"], &[("LTOKIT_CUDA_LIB_DIR", empty_dir)]);
    assert!(!out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for lib in report["libraries"].as_array().unwrap() {
        assert_eq!(lib["found"], false);
        assert_eq!(lib["present"], false);
        let err = lib["error"].as_str().unwrap();
        assert!(
            err.contains(&empty.display().to_string()),
            "the error should name the searched dir: {err}"
        );
        assert!(
            err.contains("setup-cuda.sh") || err.contains("LTOKIT_CUDA_LIB_DIR"),
            "the error should say how to fix it: {err}"
        );
    }
    // A command that needs NVRTC fails with the same advice, not a panic.
    let out = run(
        &["compile", "--arch", "sm_90", "x.cu", "-o", "x.ltoir"],
        &[("LTOKIT_CUDA_LIB_DIR", empty_dir)],
    );
    assert!(!out.status.success());
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn compile_link_inventory_round_trip() {
    let Some(dir) = toolkit_scratch("roundtrip") else {
        return;
    };
    let kernels = repo().join("crates/ltokit-demo/kernels/demo");
    let mut irs = Vec::new();
    for name in ["entry", "transform", "combine"] {
        let ir = dir.join(format!("{name}.ltoir"));
        let out = ltokit(&[
            "compile",
            "--arch",
            "sm_80",
            "-D",
            "UNUSED=1",
            kernels.join(format!("{name}.cu")).to_str().unwrap(),
            "-o",
            ir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The command's LTO-IR is byte for byte what the library makes from the source.
        let mut options = ltokit::fragment::CompileOptions::new("sm_80".parse().unwrap());
        options.defines = vec!["UNUSED=1".into()];
        let expected =
            ltokit::fragment::compile_file(&kernels.join(format!("{name}.cu")), &options).unwrap();
        assert_eq!(std::fs::read(&ir).unwrap(), expected.ltoir, "{name}");
        irs.push(ir.to_str().unwrap().to_string());
    }
    let cubin = dir.join("demo.cubin");
    let mut args = vec!["link", "--arch", "sm_90a", "--opt", "-O3"];
    args.extend(irs.iter().map(String::as_str));
    args.extend(["-o", cubin.to_str().unwrap()]);
    let out = ltokit(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    // The cubin is what nvJitLink makes of the same inputs and options, for sm_90a.
    let bytes: Vec<Vec<u8>> = irs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let inputs: Vec<ltokit::link::LinkInput> = irs
        .iter()
        .zip(&bytes)
        .map(|(p, b)| ltokit::link::LinkInput::from_bytes(p.clone(), &b[..]).unwrap())
        .collect();
    let expected =
        ltokit::link::link(&inputs, "sm_90a".parse().unwrap(), &["-O3".to_string()]).unwrap();
    let written = std::fs::read(&cubin).unwrap();
    assert_eq!(
        written, expected.cubin,
        "the cubin differs from a direct link"
    );
    let info = ltokit::formats::cubin::CubinInfo::parse(&written).unwrap();
    assert_eq!(info.kernels, ["ltk_demo"]);

    let fixture = repo().join("tests/fixtures/mixed_a_f_ptx.fatbin");
    let out = ltokit(&[
        "inventory",
        "--json",
        cubin.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let inv: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = inv["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["entries"][0]["kind"], "cubin");
    assert_eq!(files[0]["entries"][0]["arch"], "sm_90");
    let mixed: Vec<String> = files[1]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {} {}",
                e["kind"], e["arch"], e["codec"], e["stored_bytes"], e["raw_bytes"]
            )
            .replace('"', "")
        })
        .collect();
    assert_eq!(
        mixed,
        [
            "cubin sm_90a none 3568 3568",
            "cubin sm_100f none 5144 5144",
            "ptx sm_90 none 392 392"
        ]
    );
    let text = stdout(&ltokit(&["inventory", fixture.to_str().unwrap()]));
    assert!(
        text.contains("totals:") && text.contains("sm_100f"),
        "{text}"
    );
}

#[test]
fn bad_input_gives_a_clear_error_and_status() {
    let dir = scratch("bad");
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, b"this is not CUDA").unwrap();
    let out = ltokit(&["inventory", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("junk.bin") && stderr(&out).contains("not a fatbin"),
        "{}",
        stderr(&out)
    );
    let out = ltokit(&[
        "link",
        "--arch",
        "sm_90",
        junk.to_str().unwrap(),
        "-o",
        dir.join("x.cubin").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not LTO-IR"), "{}", stderr(&out));
    let out = ltokit(&["link", "--arch", "sm_9x", junk.to_str().unwrap(), "-o", "x"]);
    assert!(stderr(&out).contains("expected sm_XY"), "{}", stderr(&out));
    let out = ltokit(&["inventory", dir.join("missing.fatbin").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("missing.fatbin"), "{}", stderr(&out));
    // A phase choice the bench does not know is named before anything is loaded.
    let out = ltokit(&[
        "ivf",
        "bench",
        "--base",
        "synthetic:1000:8",
        "--queries",
        "synthetic:10",
        "--phases",
        "twice",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("\"twice\"") && stderr(&out).contains("auto, always or never"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn demo_runs_without_a_gpu() {
    let Some(dir) = toolkit_scratch("demo") else {
        return;
    };
    let cache = dir.join("cache");
    let run = || {
        run(
            &["demo", "--out-dir", dir.to_str().unwrap()],
            &[("LTOKIT_CACHE_DIR", cache.to_str().unwrap())],
        )
    };
    let out = run();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("scan_c16_f32_vmax_l2_none") && text.contains("linked by nvJitLink"),
        "{text}"
    );
    assert!(text.contains("skipped:"), "{text}");
    assert!(dir.join("scan_c16_f32_vmax_l2_none.sm_90.cubin").is_file());
    // The second run finds every kernel in the disk cache.
    let text = stdout(&run());
    assert!(text.contains("0 linked, 3 from the disk cache"), "{text}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    let lib = repo().join("tests/fixtures/libsmall.so");
    let lib = lib.to_str().unwrap();
    let mut child = command(&["inventory", lib, lib, lib], &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once, like `| head -0`
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success() || status.code() == Some(141), "{status:?}");
}

#[test]
fn targets_that_cannot_be_served_are_named_with_the_alternatives() {
    let Some(dir) = toolkit_scratch("targets") else {
        return;
    };
    let ir = dir.join("combine.ltoir");
    let source = repo().join("crates/ltokit-demo/kernels/demo/combine.cu");
    let out = ltokit(&[
        "compile",
        "--arch",
        "sm_75",
        source.to_str().unwrap(),
        "-o",
        ir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cubin = dir.join("x.cubin");
    let link = |arch: &str| {
        ltokit(&[
            "link",
            "--arch",
            arch,
            "--no-cache",
            ir.to_str().unwrap(),
            "-o",
            cubin.to_str().unwrap(),
        ])
    };
    // A well-formed target the loaded nvJitLink does not know: what it does know.
    let out = link("sm_99");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("\"sm_99\"") && err.contains("it links for") && err.contains("sm_90,"),
        "{err}"
    );
    // `native` names the local GPU, or says how to name a target when there is none.
    let out = link("native");
    if !out.status.success() {
        let err = stderr(&out);
        assert!(
            err.contains("needs a GPU") && err.contains("--arch sm_90"),
            "{err}"
        );
        assert!(!cubin.exists(), "nothing is written for a refused target");
    }
}

#[test]
fn bundle_build_refuses_a_plan_missing_the_fragment_for_a_required_symbol() {
    let Some(dir) = toolkit_scratch("spec-symbols") else {
        return;
    };
    let spec = demo_spec(
        &dir,
        "broken",
        r#"
        { "name": "good", "kernel": "ltk_demo", "entry": "entry", "fragments": ["transform", "combine"] },
        { "name": "forgot_combine", "kernel": "ltk_demo", "entry": "entry", "fragments": ["transform"] }"#,
    );
    let out_file = dir.join("b.ltkb");
    let out = ltokit(&[
        "bundle",
        "build",
        spec.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("plan forgot_combine") && err.contains("requires ltk_combine"),
        "{err}"
    );
    assert!(!out_file.exists(), "no bundle is written");
}

/// Builds a shared library `name` in `dir` from C source `code` with the system's `cc`;
/// false (the test then skips, unless CI requires the toolchain) where there is no `cc`.
fn build_fake_library(dir: &Path, name: &str, code: &str) -> bool {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, code).unwrap();
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join(name))
        .arg(&src)
        .status();
    match built {
        Ok(status) => {
            assert!(status.success(), "cc failed to build {name}");
            true
        }
        Err(e) => {
            assert!(
                std::env::var_os("LTOKIT_TEST_REQUIRE_TOOLKIT").is_none_or(|v| v != "1"),
                "no C compiler (cc) to build a fake {name}: {e}"
            );
            eprintln!("SKIPPED: no C compiler (cc) to build a fake {name}: {e}");
            false
        }
    }
}

#[test]
fn libraries_of_another_major_or_without_a_version_are_named_with_the_fix() {
    // Stand-ins for the compiler libraries, each exporting only its version call: an
    // NVRTC that says it is 12.8, and an nvFatbin whose version call fails.
    let dir = scratch("fakelibs");
    if !build_fake_library(
        &dir,
        "libnvrtc.so.13",
        "int nvrtcVersion(int *major, int *minor) { *major = 12; *minor = 8; return 0; }\n",
    ) || !build_fake_library(
        &dir,
        "libnvfatbin.so.13",
        "int nvFatbinVersion(unsigned *major, unsigned *minor) { *major = 13; *minor = 0; return 7; }\n",
    ) {
        return;
    }
    let out = run(
        &["doctor", "--json"],
        &[("LTOKIT_CUDA_LIB_DIR", dir.to_str().unwrap())],
    );
    assert!(!out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error_of = |name: &str| -> String {
        let libs = report["libraries"].as_array().unwrap();
        let lib = libs.iter().find(|l| l["name"] == name).unwrap();
        lib["error"].as_str().unwrap_or_default().to_string()
    };
    let nvrtc = error_of("NVRTC");
    assert!(
        nvrtc.contains("12.8") && nvrtc.contains("ltokit needs NVRTC 13.x"),
        "{nvrtc}"
    );
    assert!(
        nvrtc.contains("nvidia-cuda-nvrtc"),
        "names the wheel: {nvrtc}"
    );
    let fatbin = error_of("nvFatbin");
    assert!(
        fatbin.contains("nvFatbinVersion returned 7")
            && fatbin.contains("could not report its version"),
        "{fatbin}"
    );
    assert!(fatbin.contains("reinstall"), "says what to do: {fatbin}");
    // Both were there but cannot be used; nvJitLink is missing.
    let present: Vec<bool> = report["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["present"].as_bool().unwrap())
        .collect();
    assert_eq!(present, [true, false, true]);
    let text = stdout(&run(
        &["doctor"],
        &[("LTOKIT_CUDA_LIB_DIR", dir.to_str().unwrap())],
    ));
    assert!(
        text.contains("NVRTC      NOT USABLE") && text.contains("nvJitLink  NOT FOUND"),
        "{text}"
    );
}
