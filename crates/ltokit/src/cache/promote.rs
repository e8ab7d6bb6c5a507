//! Promoting what a disk cache holds for one target into a provider (what a fleet really
//! used), for `ltokit provider build --from-cache`.

use super::disk::DiskCache;
use crate::arch::Target;
use crate::error::{Error, Result};
use crate::provider::build::{from_entries, BuildSummary};
use crate::provider::{NewEntry, ProviderInfo};
use crate::version::Version;

/// A provider named `name` of the disk cache's entries for `target` (linked by nvJitLink
/// `linker`).
pub fn to_provider(
    cache: &DiskCache,
    target: Target,
    linker: Version,
    name: &str,
) -> Result<(Vec<u8>, BuildSummary)> {
    let mut entries = Vec::new();
    cache.for_each_cubin(Some(target), |key, _, cubin| {
        entries.push(NewEntry {
            key: key.0,
            plan: None,
            kernel: None,
            cubin,
        })
    });
    if entries.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "the cache at {} holds no entry for {target}",
            cache.root().display()
        )));
    }
    let info = ProviderInfo {
        name: name.to_string(),
        target,
        linker,
        producer: None,
        skipped: Vec::new(),
    };
    from_entries(info, entries)
}
