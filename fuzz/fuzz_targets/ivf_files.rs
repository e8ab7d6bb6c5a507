//! Fuzzes the IVF file readers: index files, .npy and .fvecs/.bvecs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ltokit_ivf::data::{parse_npy, parse_vecs};
use ltokit_ivf::{DType, IvfIndex};

fuzz_target!(|data: &[u8]| {
    if let Ok(index) = IvfIndex::from_bytes("fuzz", data) {
        for l in 0..index.n_lists() {
            for r in 0..index.list_size[l] as usize {
                let _ = index.row(l, r);
            }
        }
    }
    let _ = parse_npy("fuzz", data);
    let _ = parse_vecs("fuzz", data, DType::F32);
    let _ = parse_vecs("fuzz", data, DType::U8);
});
