//! Building providers: from a bundle (link every plan, or a list, for one target), or from
//! any cubins (`cache::promote` makes one of what a disk cache holds).

use std::sync::Arc;

use super::{NewEntry, Provider, ProviderInfo, SkippedPlan};
use crate::arch::Target;
use crate::bundle::Bundle;
use crate::error::{Error, Result};
use crate::toolkit::nvjitlink::NvJitLink;
use crate::version::Version;

/// What a build put in and left out.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct BuildSummary {
    /// Entries written.
    pub entries: usize,
    /// Plans the target cannot run.
    pub skipped: Vec<SkippedPlan>,
    /// Size of the provider file.
    pub bytes: u64,
}

/// The result of linking a bundle's plans for one target.
pub struct Linked {
    /// Entries with their cubins.
    pub entries: Vec<NewEntry>,
    /// Plans the target cannot run.
    pub skipped: Vec<SkippedPlan>,
    /// The nvJitLink version that linked them.
    pub linker: Version,
}

/// Links `plans` (all when `None`) of `bundle` for `target`, `jobs` at a time (0 = one
/// per core), calling `progress` after each plan; plans the target cannot run are skipped.
pub fn link_all(
    bundle: &Arc<Bundle>,
    target: Target,
    plans: Option<&[String]>,
    jobs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Linked> {
    let selected = match plans {
        None => bundle.plans(target)?,
        Some(names) => bundle.plans_of(names, target)?,
    };
    let linker = NvJitLink::get()?.version();
    let (todo, skipped) = (selected.plans, selected.skipped);
    let entries = crate::parallel::try_map(&todo, jobs, |plan| {
        let out = plan.link().map_err(|e| Error::PlanLink {
            plan: plan.name().to_string(),
            target,
            source: Box::new(e),
        })?;
        progress(plan.name());
        Ok(NewEntry {
            key: plan.key(linker).0,
            plan: Some(plan.name().to_string()),
            kernel: Some(plan.kernel().to_string()),
            cubin: out.cubin,
        })
    })?;
    Ok(Linked {
        entries,
        skipped,
        linker,
    })
}

/// Builds a provider of `plans` (all when `None`) of `bundle` for `target`.
pub fn from_bundle(
    bundle: &Arc<Bundle>,
    target: Target,
    plans: Option<&[String]>,
    jobs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(Vec<u8>, BuildSummary)> {
    let linked = link_all(bundle, target, plans, jobs, progress)?;
    from_linked(bundle, target, linked)
}

/// Writes a provider from linked plans.
pub fn from_linked(
    bundle: &Bundle,
    target: Target,
    linked: Linked,
) -> Result<(Vec<u8>, BuildSummary)> {
    let producer = bundle.manifest().fragments.iter().map(|f| f.producer).max();
    let info = ProviderInfo {
        name: bundle.manifest().name.clone(),
        target,
        linker: linked.linker,
        producer,
        skipped: linked.skipped,
    };
    from_entries(info, linked.entries)
}

/// Writes a provider of `entries` described by `info`.
pub fn from_entries(info: ProviderInfo, entries: Vec<NewEntry>) -> Result<(Vec<u8>, BuildSummary)> {
    let n = entries.len();
    let skipped = info.skipped.clone();
    let bytes = Provider::write(info, entries, 0)?;
    let summary = BuildSummary {
        entries: n,
        skipped,
        bytes: bytes.len() as u64,
    };
    Ok((bytes, summary))
}
