//! Fuzzes the fatbin reader: parsing, decompressing every entry, and the inventory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = ltokit::formats::fatbin::parse(data) {
        for entry in entries {
            let _ = entry.decompressed();
            let _ = entry.arch_name();
        }
    }
    let _ = ltokit::formats::inventory::inventory_bytes("fuzz", data);
});
