//! The fatbin reader and the inventory against real nvcc-made binaries, checked
//! entry by entry against `cuobjdump -lelf -lptx` listings made on the GPU machine
//! (tests/fixtures/cuobjdump_listings.txt, from scripts/make-fixtures.sh).

use std::collections::BTreeMap;
mod common;

use ltokit::formats::cubin::CubinInfo;
use ltokit::formats::fatbin::{self, Codec, EntryKind, FatbinWriter};
use ltokit::formats::inventory::inventory_file;
use ltokit::Target;

use common::{fixtures, read_fixture as read};

/// `file → [(kind, arch)]` in listing order, from cuobjdump's output.
fn cuobjdump_listings() -> BTreeMap<String, Vec<(String, String)>> {
    let text = std::fs::read_to_string(fixtures().join("cuobjdump_listings.txt")).unwrap();
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("== ") {
            current = name.to_string();
            out.entry(current.clone()).or_default();
        } else if let Some((head, file)) = line.split_once(": ") {
            let kind = if head.starts_with("ELF file") {
                "cubin"
            } else if head.starts_with("PTX file") {
                "ptx"
            } else {
                continue;
            };
            // e.g. "mixed_a_f_ptx.1.sm_90a.cubin": the arch is the second-to-last dot field.
            let fields: Vec<&str> = file.trim().split('.').collect();
            let arch = fields[fields.len() - 2].to_string();
            out.get_mut(&current)
                .unwrap()
                .push((kind.to_string(), arch));
        }
    }
    out
}

#[test]
fn inventory_agrees_with_cuobjdump_on_every_fixture() {
    let listings = cuobjdump_listings();
    assert!(
        listings.len() >= 7,
        "listing file lost entries: {listings:?}"
    );
    for (file, expected) in &listings {
        let inv = inventory_file(&fixtures().join(file)).unwrap();
        // cuobjdump lists cubins and PTX (not LTO-IR) and prints `f` targets without the suffix.
        let mut ours: Vec<(String, String)> = inv
            .entries
            .iter()
            .filter(|e| e.kind != EntryKind::LtoIr)
            .map(|e| {
                (
                    e.kind.name().to_string(),
                    e.arch.trim_end_matches('f').to_string(),
                )
            })
            .collect();
        let mut theirs = expected.clone();
        for kind in ["cubin", "ptx"] {
            let a: Vec<_> = ours.iter().filter(|(k, _)| k == kind).collect();
            let b: Vec<_> = theirs.iter().filter(|(k, _)| k == kind).collect();
            assert_eq!(a, b, "{file}: {kind} entries differ from cuobjdump");
        }
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{file}");
    }
}

#[test]
fn suffixes_codecs_and_kinds_are_read_from_flags() {
    let data = read("mixed_a_f_ptx.fatbin");
    let entries = fatbin::parse(&data).unwrap();
    let names: Vec<String> = entries
        .iter()
        .map(|e| format!("{} {}", e.kind, e.target))
        .collect();
    assert_eq!(names, ["cubin sm_90a", "cubin sm_100f", "ptx compute_90"]);

    let kinds_codecs = |name: &str| -> Vec<(EntryKind, Codec)> {
        fatbin::parse(&read(name))
            .unwrap()
            .iter()
            .map(|e| (e.kind, e.codec))
            .collect()
    };
    assert_eq!(
        kinds_codecs("big_speed.fatbin"),
        [
            (EntryKind::Ptx, Codec::Lz4),
            (EntryKind::Cubin, Codec::None)
        ]
    );
    assert_eq!(
        kinds_codecs("big_size.fatbin"),
        [
            (EntryKind::Ptx, Codec::Zstd),
            (EntryKind::Cubin, Codec::Zstd)
        ]
    );
    assert_eq!(
        kinds_codecs("lto90_zstd.fatbin"),
        [(EntryKind::LtoIr, Codec::Zstd)]
    );
    assert_eq!(
        kinds_codecs("sm80_sm90_zstd_size.fatbin"),
        [
            (EntryKind::Cubin, Codec::Zstd),
            (EntryKind::Cubin, Codec::Zstd)
        ]
    );
}

#[test]
fn compressed_entries_decompress_to_what_the_uncompressed_build_holds() {
    // The same kernel built with --compress-mode=size and =speed decodes to identical PTX.
    let size = read("big_size.fatbin");
    let speed = read("big_speed.fatbin");
    let (zstd_entries, lz4_entries) = (
        fatbin::parse(&size).unwrap(),
        fatbin::parse(&speed).unwrap(),
    );
    let ptx_zstd = zstd_entries[0].decompressed().unwrap();
    let ptx_lz4 = lz4_entries[0].decompressed().unwrap();
    assert_eq!(ptx_zstd.len() as u64, zstd_entries[0].raw_size);
    assert_eq!(ptx_zstd, ptx_lz4);
    assert!(std::str::from_utf8(&ptx_zstd)
        .unwrap()
        .contains(".entry big"));
    // The ZSTD cubin equals the raw one of the speed build and parses as an sm_90 cubin.
    let cubin_zstd = zstd_entries[1].decompressed().unwrap();
    assert_eq!(&cubin_zstd[..], &lz4_entries[1].payload[..cubin_zstd.len()]);
    let info = CubinInfo::parse(&cubin_zstd).unwrap();
    assert_eq!((info.machine, info.arch), (190, 90));
    assert_eq!(info.kernels, ["big"]);

    let lean = read("sm80_sm90_zstd_size.fatbin");
    let plain = read("sm80_sm90_uncompressed.fatbin");
    for (z, p) in fatbin::parse(&lean)
        .unwrap()
        .iter()
        .zip(fatbin::parse(&plain).unwrap())
    {
        assert_eq!(
            z.decompressed().unwrap()[..],
            p.payload[..z.raw_size as usize]
        );
    }
}

#[test]
fn compressed_ltoir_is_refused_with_advice() {
    let data = read("lto90_zstd.fatbin");
    let entries = fatbin::parse(&data).unwrap();
    let err = entries[0].decompressed().unwrap_err().to_string();
    assert!(err.contains("pass the whole fatbin to nvJitLink"), "{err}");
    assert_eq!(entries[0].payload_version, (1, 65));
    assert_eq!(entries[0].target.to_string(), "lto_90");
    assert_eq!(
        entries[0].options.as_deref(),
        Some("-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1")
    );
}

#[test]
fn host_binaries_are_searched_for_fatbin_sections() {
    let obj = read("host_object.o");
    let sections = fatbin::host::embedded_fatbins(&obj).unwrap();
    assert_eq!(
        sections
            .iter()
            .map(|s| s.section.as_str())
            .collect::<Vec<_>>(),
        [".nv_fatbin"]
    );
    let rdc = read("host_rdc.o");
    let sections = fatbin::host::embedded_fatbins(&rdc).unwrap();
    assert_eq!(
        sections
            .iter()
            .map(|s| s.section.as_str())
            .collect::<Vec<_>>(),
        ["__nv_relfatbin"]
    );
    // A host binary with no device code has an empty inventory, not an error.
    let me = std::env::current_exe().unwrap();
    let inv = inventory_file(&me).unwrap();
    assert_eq!(inv.format, "elf");
    assert!(inv.entries.is_empty());
}

#[test]
fn totals_add_up_per_kind_and_arch() {
    let inv = inventory_file(&fixtures().join("libsmall.so")).unwrap();
    let sum: u64 = inv.entries.iter().map(|e| e.stored_bytes).sum();
    assert_eq!(inv.totals.iter().map(|t| t.stored_bytes).sum::<u64>(), sum);
    let sm75 = inv
        .totals
        .iter()
        .find(|t| t.kind == EntryKind::Cubin && t.arch == "sm_75")
        .unwrap();
    assert_eq!(sm75.count, 2);
}

#[test]
fn writer_round_trips_through_the_reader() {
    let cubin = fatbin::parse(&read("sm80_sm90_uncompressed.fatbin")).unwrap()[0]
        .payload
        .to_vec();
    let ptx = b"//\n.version 9.0\n.target sm_90\n.address_size 64\n".to_vec();
    let ltoir = [0xed, 0x43, 0x4e, 0x7f, 1, 65, 2, 0x62, 9, 9, 9];
    let mut w = FatbinWriter::new();
    w.add(
        EntryKind::Cubin,
        "sm_90a".parse().unwrap(),
        &cubin,
        Codec::Zstd,
    )
    .unwrap();
    w.add(
        EntryKind::Ptx,
        "compute_100f".parse().unwrap(),
        &ptx,
        Codec::None,
    )
    .unwrap();
    w.add(
        EntryKind::LtoIr,
        "sm_90".parse().unwrap(),
        &ltoir,
        Codec::None,
    )
    .unwrap();
    let bytes = w.finish();
    let entries = fatbin::parse(&bytes).unwrap();
    let t = |s: &str| s.parse::<Target>().unwrap();
    assert_eq!(
        entries.iter().map(|e| e.target).collect::<Vec<_>>(),
        [t("sm_90a"), t("compute_100f"), t("lto_90")]
    );
    assert_eq!(entries[0].codec, Codec::Zstd);
    assert_eq!(&entries[0].decompressed().unwrap()[..], &cubin[..]);
    assert_eq!(&entries[1].decompressed().unwrap()[..ptx.len()], &ptx[..]);
    assert_eq!(entries[1].payload_version, (9, 0));
    assert_eq!(entries[2].payload_version, (1, 65));
    // Two containers back to back parse as one list.
    let mut twice = bytes.clone();
    twice.extend_from_slice(&bytes);
    assert_eq!(fatbin::parse(&twice).unwrap().len(), 6);
    // LTO-IR is never compressed by the writer; empty payloads are refused.
    assert!(FatbinWriter::new()
        .add(EntryKind::LtoIr, t("sm_90"), &ltoir, Codec::Zstd)
        .is_err());
    assert!(FatbinWriter::new()
        .add(EntryKind::Ptx, t("sm_90"), b"", Codec::None)
        .is_err());
    assert!(FatbinWriter::new()
        .add(EntryKind::LtoIr, t("sm_90"), b"not ir", Codec::None)
        .is_err());
}

/// Every truncation and many byte flips of every fixture give an error or a result,
/// never a panic; truncations inside a container are always errors.
#[test]
fn malformed_fatbins_are_errors_not_panics() {
    for name in [
        "mixed_a_f_ptx.fatbin",
        "big_size.fatbin",
        "lto90_zstd.fatbin",
        "sm80_sm90_zstd_size.fatbin",
    ] {
        let data = read(name);
        for len in 0..data.len() {
            let cut = &data[..len];
            match fatbin::parse(cut) {
                Err(e) => assert!(e.to_string().contains("fatbin"), "{name}[..{len}]: {e}"),
                Ok(entries) => panic!(
                    "{name} truncated to {len} bytes parsed as {} entries",
                    entries.len()
                ),
            }
        }
        let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
        for _ in 0..3000 {
            let mut bad = data.clone();
            let at = rng.usize(..bad.len().min(400));
            bad[at] ^= rng.u8(..) | 1;
            if let Ok(entries) = fatbin::parse(&bad) {
                for e in entries {
                    let _ = e.decompressed();
                }
            }
            let _ = ltoki_inventory(&bad);
        }
    }
}

fn ltoki_inventory(data: &[u8]) -> ltokit::Result<ltokit::formats::inventory::FileInventory> {
    ltokit::formats::inventory::inventory_bytes("fuzzed", data)
}

#[test]
fn garbage_is_rejected_with_a_clear_error() {
    let err = ltokit::formats::inventory::inventory_bytes("notes.txt", b"just some text")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("notes.txt") && err.contains("not a fatbin, cubin"),
        "{err}"
    );
    let mut elf = read("host_object.o");
    elf.truncate(100);
    assert!(ltokit::formats::inventory::inventory_bytes("cut.o", &elf).is_err());
    let err = fatbin::parse(&[0x50, 0xed, 0x55, 0xba, 2, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap_err()
        .to_string();
    assert!(err.contains("version 2"), "{err}");
}
