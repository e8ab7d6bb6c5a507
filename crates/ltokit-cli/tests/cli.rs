//! The `ltokit` command as a user runs it. Needs the CUDA compiler libraries
//! (scripts/setup-cuda.sh), not a GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ltokit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ltokit"))
        .args(args)
        .output()
        .expect("ltokit runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ltokit-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn doctor_reports_every_library_with_path_and_version() {
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
    let out = Command::new(env!("CARGO_BIN_EXE_ltokit"))
        .args(["doctor", "--json"])
        .env("LTOKIT_CUDA_LIB_DIR", &empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for lib in report["libraries"].as_array().unwrap() {
        assert_eq!(lib["found"], false);
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
    let out = Command::new(env!("CARGO_BIN_EXE_ltokit"))
        .args(["compile", "--arch", "sm_90", "x.cu", "-o", "x.ltoir"])
        .env("LTOKIT_CUDA_LIB_DIR", &empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn compile_link_inventory_round_trip() {
    let dir = scratch("roundtrip");
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
        irs.push(ir.to_str().unwrap().to_string());
    }
    let cubin = dir.join("demo.cubin");
    let mut args = vec!["link", "--arch", "sm_90a", "--opt", "-O3"];
    args.extend(irs.iter().map(String::as_str));
    args.extend(["-o", cubin.to_str().unwrap()]);
    let out = ltokit(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("kernels: ltk_demo"),
        "{}",
        stdout(&out)
    );

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
}

#[test]
fn demo_runs_without_a_gpu() {
    let dir = scratch("demo");
    let cache = dir.join("cache");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_ltokit"))
            .args(["demo", "--out-dir", dir.to_str().unwrap()])
            .env("LTOKIT_CACHE_DIR", &cache)
            .output()
            .unwrap()
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
    assert!(text.contains("0 linked, 4 from the disk cache"), "{text}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    let lib = repo().join("tests/fixtures/libsmall.so");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ltokit"))
        .args([
            "inventory",
            lib.to_str().unwrap(),
            lib.to_str().unwrap(),
            lib.to_str().unwrap(),
        ])
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
