//! Fuzzes the bundle reader: open, then decompress every fragment and expand every plan.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(bundle) = ltokit::bundle::Bundle::from_bytes("fuzz", data.to_vec()) {
        for i in 0..bundle.manifest().fragments.len() {
            let _ = bundle.fragment_bytes(i);
        }
        if let Ok(target) = "sm_90".parse() {
            let _ = bundle.plans(target);
        }
    }
});
