//! Fuzzes the ELF readers: cubin facts, fatbin sections of host binaries, inventory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ltokit::formats::cubin::CubinInfo::parse(data);
    if let Ok(sections) = ltokit::formats::fatbin::host::embedded_fatbins(data) {
        for section in sections {
            let _ = ltokit::formats::fatbin::parse(section.data);
        }
    }
    let _ = ltokit::formats::inventory::inventory_bytes("fuzz", data);
    let _ = ltokit::link::sniff(data);
});
