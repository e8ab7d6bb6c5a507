//! Fuzzes the provider reader (formats 1 and 2): open, then read every entry.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("fuzz.ltkp");
    if let Ok(provider) = ltokit::provider::Provider::from_bytes(path, data.to_vec()) {
        for i in 0..provider.manifest().entries.len() {
            let _ = provider.entry_bytes(i);
        }
    }
});
