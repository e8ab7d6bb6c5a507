//! The provider format: format 2 (solid blocks) round trips, format 1 files still read,
//! and damage of any part is a clear error.

use std::path::Path;

use ltokit::digest::Digest;
use ltokit::provider::{NewEntry, Provider, ProviderInfo, FORMAT_VERSION};
use ltokit::version::Version;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Fresh pseudo-random "cubins": near-copies within a kernel, as real variants are.
fn entries(seed: u64) -> Vec<NewEntry> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    for kernel in ["scan", "merge", "coarse"] {
        let base: Vec<u8> = (0..20_000).map(|_| next() as u8).collect();
        for v in 0..12 {
            let mut cubin = base.clone();
            for _ in 0..200 {
                let at = (next() % cubin.len() as u64) as usize;
                cubin[at] = next() as u8;
            }
            cubin.truncate(15_000 + (next() % 5_000) as usize);
            out.push(NewEntry {
                key: Digest::of(format!("{kernel}-{v}-{seed}").as_bytes()),
                plan: Some(format!("{kernel}_v{v}")),
                kernel: Some(kernel.to_string()),
                cubin,
            });
        }
    }
    out
}

fn info() -> ProviderInfo {
    ProviderInfo {
        name: "test".into(),
        target: "sm_90".parse().unwrap(),
        linker: Version::new(13, 0),
        producer: Some(Version::new(13, 0)),
        skipped: vec![],
    }
}

#[test]
fn format_2_round_trips_every_entry_in_any_order() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let input = entries(seed);
    // Blocks of 100 kB: several per kernel, and one shared by two kernels.
    let bytes = Provider::write_with_budget(info(), input.clone(), 100_000, 2).unwrap();
    let p = Provider::from_bytes(Path::new("t.ltkp"), bytes.clone()).unwrap();
    assert_eq!(p.format(), FORMAT_VERSION);
    let m = p.manifest();
    assert_eq!(m.entries.len(), input.len());
    assert!(m.blocks.len() >= 6, "{:?}", m.blocks);
    assert!(m.blocks.iter().all(|b| b.raw_bytes <= 100_000));
    let raw: u64 = input.iter().map(|e| e.cubin.len() as u64).sum();
    assert_eq!(m.raw_bytes(), raw);
    assert!(
        m.stored_bytes() * 3 < raw,
        "solid blocks share what near-copies have in common: {} of {raw}",
        m.stored_bytes()
    );
    // Backwards, so that every read lands beyond the cached prefix of its block.
    for i in (0..m.entries.len()).rev() {
        let e = &m.entries[i];
        let want = input.iter().find(|n| n.key == e.key).unwrap();
        assert_eq!(p.entry_bytes(i).unwrap(), want.cubin, "{:?}", e.plan);
        assert_eq!(Digest::of(&want.cubin), e.slot.digest);
    }
    p.verify().unwrap();
    // The inventory attributes each block's bytes to its entries.
    let shares: u64 = m.entries.iter().map(|e| m.stored_share(e)).sum();
    assert!(shares <= m.stored_bytes() && shares + 64 >= m.stored_bytes());
}

#[test]
fn damage_is_named_and_never_served() {
    let bytes = Provider::write(info(), entries(7), 1).unwrap();
    for len in [0, 10, 64, bytes.len() / 2, bytes.len() - 1] {
        let err = Provider::from_bytes(Path::new("cut.ltkp"), bytes[..len].to_vec())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cut.ltkp") && err.contains("provider build"),
            "{err}"
        );
    }
    let mut newer = bytes.clone();
    newer[8] = 3;
    let err = Provider::from_bytes(Path::new("n.ltkp"), newer)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("format version 3 (written by a newer ltokit)"),
        "{err}"
    );
    // A flipped payload byte: the file opens (blocks are read lazily), the damaged block's
    // entries are refused, naming the entry.
    let mut bad = bytes.clone();
    let at = bytes.len() - 100;
    bad[at] ^= 0x55;
    let p = Provider::from_bytes(Path::new("b.ltkp"), bad).unwrap();
    let err = p.verify().unwrap_err().to_string();
    assert!(err.contains("b.ltkp") && err.contains("entry "), "{err}");
}

#[test]
fn format_1_files_are_still_read() {
    // Written by ltokit before format 2: three demo plans for sm_90, one frame each.
    let path = repo().join("tests/fixtures/demo-sm90-v1.ltkp");
    let p = Provider::open(&path).unwrap();
    assert_eq!(p.format(), 1);
    assert_eq!(p.target().to_string(), "sm_90");
    let m = p.manifest();
    assert_eq!((m.entries.len(), m.blocks.len()), (3, 3));
    p.verify().unwrap();
    for i in 0..3 {
        let cubin = p.entry_bytes(i).unwrap();
        let info = ltokit::formats::cubin::CubinInfo::parse(&cubin).unwrap();
        assert_eq!(info.arch, 90);
    }
}
