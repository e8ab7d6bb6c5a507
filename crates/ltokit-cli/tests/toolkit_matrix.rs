//! The toolkit version matrix: LTO-IR from every NVRTC release installed under
//! `LTOKIT_TOOLKIT_MATRIX` (one folder per release, made by scripts/setup-toolkit-matrix.sh)
//! linked by every nvJitLink release there, for sm_75, sm_90 and the newest target each
//! linker knows. A linker at least as new as the producer must link (a cubin for the
//! right architecture with the kernel); an older one must be refused before nvJitLink is
//! called, naming both versions and what to install. No pair is skipped, and the
//! README's table must be the one this test finds.

mod common;

use std::path::{Path, PathBuf};

use ltokit::formats::cubin::CubinInfo;

use common::{repo, run, scratch, text};

/// One installed release: its folder's libraries and what `ltokit doctor` says of them.
struct Release {
    lib: PathBuf,
    nvrtc: String,
    linker: (u32, u32),
    symbols: String,
    targets: Vec<String>,
}

fn releases(root: &Path) -> Vec<Release> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path().join("nvidia/cu13/lib"))
        .filter(|p| p.join("libnvJitLink.so.13").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|lib| {
            let o = run(
                &["doctor", "--json"],
                &[("LTOKIT_CUDA_LIB_DIR", lib.to_str().unwrap())],
            );
            let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let libs = report["libraries"].as_array().unwrap();
            let version = |i: usize| {
                let v = &libs[i]["version"];
                (
                    v["major"].as_u64().unwrap() as u32,
                    v["minor"].as_u64().unwrap() as u32,
                )
            };
            let detail = libs[1]["detail"].as_str().unwrap().to_string();
            let (symbols, targets) = detail
                .strip_prefix("symbols: ")
                .and_then(|d| d.split_once("; links for: "))
                .unwrap_or_else(|| panic!("doctor's nvJitLink detail: {detail}"));
            let (major, minor) = version(0);
            Release {
                nvrtc: format!("{major}.{minor}"),
                linker: version(1),
                symbols: symbols.to_string(),
                targets: targets.split(", ").map(str::to_string).collect(),
                lib,
            }
        })
        .collect()
}

/// The README's table between its markers.
fn readme_table() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("<!-- toolkit-matrix:begin -->")
        .expect("README has the toolkit-matrix markers");
    let end = readme.find("<!-- toolkit-matrix:end -->").unwrap();
    readme[start + "<!-- toolkit-matrix:begin -->".len()..end]
        .trim()
        .to_string()
}

#[test]
fn every_producer_with_every_linker() {
    let Some(root) = std::env::var_os("LTOKIT_TOOLKIT_MATRIX").filter(|v| !v.is_empty()) else {
        assert!(
            std::env::var_os("LTOKIT_TEST_REQUIRE_MATRIX").is_none_or(|v| v != "1"),
            "LTOKIT_TEST_REQUIRE_MATRIX=1 but LTOKIT_TOOLKIT_MATRIX is not set"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED every_producer_with_every_linker: LTOKIT_TOOLKIT_MATRIX is not set (scripts/setup-toolkit-matrix.sh installs the releases; scripts/test.sh sets it)"
        );
        return;
    };
    let releases = releases(Path::new(&root));
    assert!(
        releases.len() >= 3,
        "the matrix needs at least three releases"
    );
    // Each release's real export table has both names ltokit resolves, in order: the
    // plain one (what `ltokit doctor` reports it used) and the versioned fallback.
    for r in &releases {
        let data = std::fs::read(r.lib.join("libnvJitLink.so.13")).unwrap();
        let elf = object::File::parse(&*data).unwrap();
        let names: Vec<String> = object::Object::dynamic_symbols(&elf)
            .filter_map(|s| object::ObjectSymbol::name(&s).ok().map(str::to_string))
            .collect();
        let versioned = format!("__nvJitLinkCreate_{}_{}", r.linker.0, r.linker.1);
        assert!(
            names.iter().any(|n| n == "nvJitLinkCreate") && names.contains(&versioned),
            "nvJitLink {:?} exports neither nvJitLinkCreate nor {versioned}",
            r.linker
        );
        assert_eq!(r.symbols, "plain", "doctor says which flavour it resolved");
    }
    let dir = scratch("matrix");
    let sources = repo().join("crates/ltokit-demo/kernels/demo");
    // LTO-IR of the demo's three fragments from every producer.
    let mut inputs: Vec<Vec<String>> = Vec::new();
    for p in &releases {
        let mut files = Vec::new();
        for f in ["entry", "transform", "combine"] {
            let out = dir.join(format!("{f}-{}.ltoir", p.nvrtc));
            let o = run(
                &[
                    "compile",
                    "--arch",
                    "sm_75",
                    sources.join(format!("{f}.cu")).to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                ],
                &[("LTOKIT_CUDA_LIB_DIR", p.lib.to_str().unwrap())],
            );
            assert!(o.status.success(), "NVRTC {}: {}", p.nvrtc, text(&o));
            files.push(out.to_str().unwrap().to_string());
        }
        inputs.push(files);
    }
    let mut table = format!(
        "| LTO-IR from NVRTC | {} |\n|---|{}",
        releases
            .iter()
            .map(|l| format!(
                "nvJitLink {}.{} ({} symbols)",
                l.linker.0, l.linker.1, l.symbols
            ))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(releases.len())
    );
    for (p, files) in releases.iter().zip(&inputs) {
        table.push_str(&format!("\n| {} |", p.nvrtc));
        for l in &releases {
            let newest = l.targets.last().cloned().unwrap_or_default();
            let targets = ["sm_75".to_string(), "sm_90".to_string(), newest];
            let producer_ok = l.linker >= parse(&p.nvrtc);
            for target in &targets {
                let out = dir.join(format!("{}-{}-{target}.cubin", p.nvrtc, l.linker.1));
                let mut args = vec!["link", "--no-cache", "--arch", target.as_str()];
                args.extend(files.iter().map(String::as_str));
                args.extend(["-o", out.to_str().unwrap()]);
                let o = run(&args, &[("LTOKIT_CUDA_LIB_DIR", l.lib.to_str().unwrap())]);
                let pair = format!(
                    "IR from NVRTC {} linked by nvJitLink {}.{} for {target}",
                    p.nvrtc, l.linker.0, l.linker.1
                );
                if producer_ok {
                    assert!(o.status.success(), "{pair}: {}", text(&o));
                    let info = CubinInfo::parse(&std::fs::read(&out).unwrap()).unwrap();
                    assert_eq!(info.machine, 190, "{pair}");
                    assert_eq!(
                        format!("sm_{}", info.arch),
                        target.trim_end_matches(['a', 'f']),
                        "{pair}"
                    );
                    assert_eq!(info.kernels, ["ltk_demo"], "{pair}");
                } else {
                    assert!(!o.status.success(), "{pair} must be refused");
                    let err = text(&o);
                    assert!(
                        err.contains(&format!("LTO-IR made by CUDA {}", p.nvrtc))
                            && err.contains(&format!("nvJitLink {}.{}", l.linker.0, l.linker.1))
                            && err.contains("install nvJitLink >="),
                        "{pair}: {err}"
                    );
                    assert!(!out.exists(), "{pair}: nothing is written");
                }
            }
            table.push_str(&if producer_ok {
                format!(" links ({}) |", targets.join(", "))
            } else {
                " refused before linking |".to_string()
            });
        }
    }
    if let Some(path) = std::env::var_os("LTOKIT_MATRIX_TABLE_OUT") {
        std::fs::write(path, format!("{table}\n")).unwrap();
    }
    assert_eq!(
        readme_table(),
        table,
        "README's toolkit table differs from what the matrix found; scripts/update-toolkit-matrix.sh rewrites it"
    );
}

fn parse(v: &str) -> (u32, u32) {
    let (a, b) = v.split_once('.').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}
