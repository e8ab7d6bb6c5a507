//! The binary audit: does a CUDA binary carry only the kinds of code and the targets a
//! deployment allows, within a size budget? Works on anything [`crate::formats::inventory`]
//! reads: providers, fatbins, cubins, objects, shared libraries.

use std::path::Path;

use crate::arch::Target;
use crate::error::Result;
use crate::formats::fatbin::EntryKind;
use crate::formats::inventory;

/// What is allowed.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Allowed targets (compared by compute capability and `a`/`f` suffix).
    pub targets: Vec<Target>,
    /// Allowed kinds of code (usually only cubins: no PTX, no LTO-IR).
    pub kinds: Vec<EntryKind>,
    /// Largest allowed file size.
    pub max_bytes: Option<u64>,
}

/// One violation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// The file.
    pub file: String,
    /// Entry index in the inventory, or `None` for a whole-file finding.
    pub entry: Option<usize>,
    /// The entry's kind and arch, or the file size.
    pub what: String,
    /// Why it is not allowed.
    pub why: String,
}

/// Checks one file; an empty list means it passes.
pub fn check_file(path: &Path, policy: &Policy) -> Result<Vec<Finding>> {
    let inv = inventory::inventory_file(path)?;
    let file = path.display().to_string();
    let mut out = Vec::new();
    for (i, e) in inv.entries.iter().enumerate() {
        let what = format!("{} {}", e.kind, e.arch);
        if !policy.kinds.contains(&e.kind) {
            out.push(Finding {
                file: file.clone(),
                entry: Some(i),
                what: what.clone(),
                why: format!("kind {} is not allowed", e.kind),
            });
        }
        let allowed = e.arch.parse::<Target>().is_ok_and(|t| {
            policy
                .targets
                .iter()
                .any(|a| a.cc == t.cc && a.variant == t.variant)
        });
        if !allowed {
            out.push(Finding {
                file: file.clone(),
                entry: Some(i),
                what,
                why: format!("target {} is not allowed", e.arch),
            });
        }
    }
    if let Some(max) = policy.max_bytes {
        let size = std::fs::metadata(path)
            .map_err(|e| crate::Error::io(path, e))?
            .len();
        if size > max {
            out.push(Finding {
                file,
                entry: None,
                what: format!("{size} bytes"),
                why: format!("over the budget of {max} bytes"),
            });
        }
    }
    Ok(out)
}
