//! Fuzzes the ELF readers: cubin facts, fatbin sections of host binaries, inventory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ltokit::cubin::CubinInfo::parse(data);
    if let Ok(sections) = ltokit::fatbin::host::embedded_fatbins(data) {
        for section in sections {
            let _ = ltokit::fatbin::parse(section.data);
        }
    }
    let _ = ltokit::inventory::inventory_bytes("fuzz", data);
    let _ = ltokit::link::sniff(data);
});
