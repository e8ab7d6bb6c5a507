//! The real pipeline on a machine without a GPU: CUDA C++ → LTO-IR (NVRTC) → cubin
//! (nvJitLink) for several architectures, with every cubin's ELF checked. Needs the CUDA
//! 13.0 compiler libraries (scripts/setup-cuda.sh installs them); each test says it was
//! skipped, and why, without them (and fails instead under LTOKIT_TEST_REQUIRE_TOOLKIT=1).

mod common;

use ltokit::formats::cubin::CubinInfo;
use ltokit::formats::fatbin::{self, Codec, EntryKind, FatbinWriter};
use ltokit::fragment::{self, CompileOptions};
use ltokit::link::{self, LinkInput};
use ltokit::toolkit::nvfatbin::{FatbinInput, NvFatbin};
use ltokit::toolkit::nvjitlink::NvJitLink;
use ltokit::{Error, Target};
use ltokit_demo as demo;

fn t(s: &str) -> Target {
    s.parse().unwrap()
}

fn link_demo(compile_for: &str, link_for: &str) -> ltokit::Result<Vec<u8>> {
    let fragments = demo::compile_fragments(t(compile_for))?;
    let inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    Ok(link::link(&inputs, t(link_for), &[])?.cubin)
}

#[test]
fn three_fragments_link_for_every_architecture() {
    if demo::skip_without_toolkit() {
        return;
    }
    let fragments = demo::compile_fragments(t("sm_75")).unwrap();
    assert_eq!(fragments.len(), 3);
    for f in &fragments {
        assert!(
            ltokit::formats::ltoir::is_ltoir(&f.ltoir),
            "{} is not LTO-IR",
            f.name
        );
        assert_eq!(f.producer.major, 13);
    }
    let inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    for (arch, number) in [
        ("sm_75", 75),
        ("sm_80", 80),
        ("sm_90", 90),
        ("sm_90a", 90),
        ("sm_100", 100),
    ] {
        let out = link::link(&inputs, t(arch), &["-O3".to_string()]).unwrap();
        assert!(out.options.contains(&"-lto".to_string()));
        assert!(out.options.contains(&format!("-arch={arch}")));
        let info = CubinInfo::parse(&out.cubin).unwrap();
        assert_eq!(info.machine, 190, "{arch}: not EM_CUDA");
        assert_eq!(info.arch, number, "{arch}: e_flags 0x{:x}", info.e_flags);
        assert_eq!(info.kernels, [demo::KERNEL], "{arch}");
        // Cross-fragment inlining: the device functions are gone from the cubin.
        assert!(
            !info
                .functions
                .iter()
                .any(|f| f.starts_with("ltk_transform")),
            "{arch}: {:?}",
            info.functions
        );
    }
}

#[test]
fn missing_device_function_is_a_link_error_with_the_log() {
    if demo::skip_without_toolkit() {
        return;
    }
    let fragments = demo::compile_fragments(t("sm_90")).unwrap();
    let inputs: Vec<LinkInput> = fragments[..2]
        .iter()
        .map(LinkInput::from_fragment)
        .collect();
    let err = link::link(&inputs, t("sm_90"), &[]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Link { .. }), "{text}");
    assert!(
        text.contains("ltk_combine"),
        "the log should name the undefined symbol: {text}"
    );
}

#[test]
fn ir_for_a_newer_architecture_is_refused_before_linking() {
    if demo::skip_without_toolkit() {
        return;
    }
    let err = link_demo("sm_90", "sm_80").unwrap_err().to_string();
    assert!(err.contains("cannot be linked for sm_80"), "{err}");
    let err = link_demo("sm_90a", "sm_90").unwrap_err().to_string();
    assert!(err.contains("lto_90a"), "{err}");
    assert!(link_demo("sm_90a", "sm_90a").is_ok());
    assert!(link_demo("sm_100f", "sm_103").is_ok());
}

#[test]
fn ir_from_a_newer_toolkit_is_refused_clearly() {
    if demo::skip_without_toolkit() {
        return;
    }
    let fragments = demo::compile_fragments(t("sm_90")).unwrap();
    let mut inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    let linker = NvJitLink::get().unwrap().version();
    inputs[1].producer = Some(ltokit::version::Version::new(
        linker.major,
        linker.minor + 1,
    ));
    let err = link::link(&inputs, t("sm_90"), &[]).unwrap_err();
    assert!(matches!(err, Error::IrNewerThanLinker { .. }), "{err}");
    // Raw IR with a 13.5 header (bytes 4-7: 1, 67, 2, 131) is caught from the bytes alone.
    let mut raw = fragments[1].ltoir.clone();
    raw[4..8].copy_from_slice(&[1, 67, 2, 131]);
    let input = LinkInput::from_bytes("newer.ltoir", raw).unwrap();
    assert_eq!(input.producer, Some(ltokit::version::Version::new(13, 5)));
    if linker < ltokit::version::Version::new(13, 5) {
        let err = link::link(&[input], t("sm_90"), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("newer than nvJitLink"), "{err}");
    } else {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "PARTLY SKIPPED ir_from_a_newer_toolkit_is_refused_clearly: nvJitLink {linker} is not older than 13.5 IR, so the refusal from the header bytes alone was not exercised"
        );
    }
}

#[test]
fn real_ir_names_the_nvrtc_that_made_it() {
    if demo::skip_without_toolkit() {
        return;
    }
    let nvrtc = ltokit::toolkit::nvrtc::Nvrtc::get().unwrap().version();
    for fragment in demo::compile_fragments(t("sm_80")).unwrap() {
        assert_eq!(
            ltokit::formats::ltoir::producer_of_ir(&fragment.ltoir),
            Some(nvrtc),
            "{}: IR header {:?} from NVRTC {nvrtc}",
            fragment.name,
            &fragment.ltoir[4..8]
        );
    }
}

#[test]
fn compile_errors_carry_nvrtcs_log() {
    if demo::skip_without_toolkit() {
        return;
    }
    let err = fragment::compile(
        "__global__ void k() { undeclared_thing(); }",
        "broken.cu",
        &CompileOptions::new(t("sm_90")),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Compile { .. }), "{text}");
    assert!(
        text.contains("broken.cu") && text.contains("undeclared_thing"),
        "{text}"
    );
    let err = fragment::compile(
        "",
        "x.cu",
        &CompileOptions::new(t("sm_90")).define("BAD NAME"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("NAME=VALUE"), "{err}");
}

#[test]
fn name_expressions_defines_and_cuda_headers() {
    if demo::skip_without_toolkit() {
        return;
    }
    let source = r#"
        #include <cuda_fp16.h>
        #include <cuda/std/cstdint>
        template <int N, typename T>
        __global__ void scale(T* data) { data[threadIdx.x] = data[threadIdx.x] * T(N * FACTOR); }
        __global__ void halves(__half* h) { h[threadIdx.x] = __hadd(h[threadIdx.x], h[threadIdx.x]); }
    "#;
    let opts = CompileOptions::new(t("sm_90"))
        .define("FACTOR=3")
        .name_expression("scale<4, float>")
        .name_expression("&halves");
    let frag = fragment::compile(source, "templates.cu", &opts).unwrap();
    let lowered = frag.lowered_name("scale<4, float>").unwrap().to_string();
    assert!(
        lowered.starts_with("_Z") && lowered.contains("scale"),
        "{lowered}"
    );
    let out = link::link(&[LinkInput::from_fragment(&frag)], t("sm_90"), &[]).unwrap();
    let info = CubinInfo::parse(&out.cubin).unwrap();
    assert!(
        info.kernels.contains(&lowered),
        "{:?} lacks {lowered}",
        info.kernels
    );
    assert!(info
        .kernels
        .contains(&frag.lowered_name("&halves").unwrap().to_string()));
}

#[test]
fn fatbins_from_our_writer_and_nvfatbin_link_and_parse() {
    if demo::skip_without_toolkit() {
        return;
    }
    let fragments = demo::compile_fragments(t("sm_80")).unwrap();
    // Our writer: the entry fragment inside a fatbin, the others as raw LTO-IR.
    let mut w = FatbinWriter::new();
    w.add(
        EntryKind::LtoIr,
        t("sm_80"),
        &fragments[0].ltoir,
        Codec::None,
    )
    .unwrap();
    let ours = w.finish();
    let mut inputs = vec![LinkInput::from_bytes("entry.fatbin", ours).unwrap()];
    inputs.extend(fragments[1..].iter().map(LinkInput::from_fragment));
    let cubin = link::link(&inputs, t("sm_90"), &[]).unwrap().cubin;
    assert_eq!(CubinInfo::parse(&cubin).unwrap().kernels, [demo::KERNEL]);

    // A ZSTD-compressed PTX entry from our writer links without -lto.
    let ptx = fragment::compile_ptx(
        "extern \"C\" __global__ void p(float* a) { a[threadIdx.x] *= 2.f; }",
        "p.cu",
        &CompileOptions::new(t("sm_80")),
    )
    .unwrap();
    let mut w = FatbinWriter::new();
    w.add(EntryKind::Ptx, t("compute_80"), ptx.as_bytes(), Codec::Zstd)
        .unwrap();
    let out = link::link(
        &[LinkInput::from_bytes("ptx.fatbin", w.finish()).unwrap()],
        t("sm_90"),
        &[],
    )
    .unwrap();
    assert!(!out.options.contains(&"-lto".to_string()));
    assert_eq!(CubinInfo::parse(&out.cubin).unwrap().kernels, ["p"]);

    // nvFatbin's output, including its ZSTD "size" mode, is read by our reader.
    let nvfatbin = NvFatbin::get().unwrap();
    let built = nvfatbin
        .build(
            &[
                "-64".into(),
                "-compress-mode=size".into(),
                "-compress-all".into(),
            ],
            &[
                FatbinInput {
                    kind: EntryKind::Cubin,
                    data: &cubin,
                    arch: "90a",
                    identifier: "demo",
                },
                FatbinInput {
                    kind: EntryKind::Ptx,
                    data: ptx.as_bytes(),
                    arch: "80",
                    identifier: "p",
                },
                FatbinInput {
                    kind: EntryKind::LtoIr,
                    data: &fragments[2].ltoir,
                    arch: "100f",
                    identifier: "c",
                },
            ],
        )
        .unwrap();
    let entries = fatbin::parse(&built).unwrap();
    let names: Vec<String> = entries
        .iter()
        .map(|e| format!("{} {}", e.kind, e.target))
        .collect();
    assert_eq!(names, ["cubin sm_90a", "ptx compute_80", "ltoir lto_100f"]);
    let cubin_entry = entries.iter().find(|e| e.kind == EntryKind::Cubin).unwrap();
    assert_eq!(
        &cubin_entry.decompressed().unwrap()[..cubin.len()],
        &cubin[..]
    );
}

#[test]
fn a_fatbin_without_a_usable_entry_is_refused_with_its_contents() {
    if demo::skip_without_toolkit() {
        return;
    }
    let fixture = common::read_fixture("sm80_sm90_uncompressed.fatbin");
    let err = link::link(
        &[LinkInput::from_bytes("old.fatbin", fixture).unwrap()],
        t("sm_100"),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no entry usable for sm_100") && err.contains("cubin sm_80"),
        "{err}"
    );
}

#[test]
fn bad_inputs_and_options_are_clear_errors() {
    if demo::skip_without_toolkit() {
        return;
    }
    assert!(link::link(&[], t("sm_90"), &[])
        .unwrap_err()
        .to_string()
        .contains("nothing to link"));
    let err = LinkInput::from_bytes("readme.md", b"# hello".to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("readme.md") && err.contains("not LTO-IR"),
        "{err}"
    );
    let fragments = demo::compile_fragments(t("sm_90")).unwrap();
    let inputs: Vec<LinkInput> = fragments.iter().map(LinkInput::from_fragment).collect();
    let err = link::link(&inputs, t("sm_90"), &["-no-such-option".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("unrecognized option"), "{err}");
}
