//! How a bundle's manifest is stored (format 2): compact JSON, zstd-compressed, in which
//! plans refer to fragments, kernels and option lists by index instead of repeating
//! their names — a bundle of a thousand plans over a few dozen fragments repeats little.

use std::collections::HashMap;

use super::{FragmentRecord, Manifest, PlanRecord};
use crate::formats::blocks::{self, Block};

/// Largest manifest ltokit decompresses (64 MiB).
const MAX_MANIFEST_BYTES: usize = 64 << 20;

/// A plan as stored: indices into the fragment, kernel and option tables.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredPlan {
    name: String,
    kernel: u32,
    entry: u32,
    fragments: Vec<u32>,
    options: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_arch: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    arch_specific: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StoredManifest {
    name: String,
    fragments: Vec<FragmentRecord>,
    blocks: Vec<Block>,
    kernels: Vec<String>,
    option_lists: Vec<Vec<String>>,
    plans: Vec<StoredPlan>,
}

/// Interns values, handing out their index.
struct Table<T> {
    items: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T: Clone + Eq + std::hash::Hash> Table<T> {
    fn new() -> Self {
        Table {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn intern(&mut self, value: &T) -> u32 {
        if let Some(&i) = self.index.get(value) {
            return i;
        }
        let i = self.items.len() as u32;
        self.items.push(value.clone());
        self.index.insert(value.clone(), i);
        i
    }
}

/// Encodes `m` for storage. Every name a plan uses must resolve (the writer validated).
pub(super) fn encode(m: &Manifest) -> Result<Vec<u8>, crate::Error> {
    let fragment_index: HashMap<&str, u32> = m
        .fragments
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i as u32))
        .collect();
    let resolve = |plan: &str, name: &str| {
        fragment_index
            .get(name)
            .copied()
            .ok_or_else(|| crate::Error::BadSpec {
                spec: m.name.clone(),
                why: format!("plan {plan} names unknown fragment {name}"),
            })
    };
    let mut kernels = Table::new();
    let mut options = Table::new();
    let mut plans = Vec::with_capacity(m.plans.len());
    for p in &m.plans {
        plans.push(StoredPlan {
            name: p.name.clone(),
            kernel: kernels.intern(&p.kernel),
            entry: resolve(&p.name, &p.entry)?,
            fragments: p
                .fragments
                .iter()
                .map(|f| resolve(&p.name, f))
                .collect::<Result<_, _>>()?,
            options: options.intern(&p.options),
            min_arch: p.min_arch,
            arch_specific: p.arch_specific,
        });
    }
    let stored = StoredManifest {
        name: m.name.clone(),
        fragments: m.fragments.clone(),
        blocks: m.blocks.clone(),
        kernels: kernels.items,
        option_lists: options.items,
        plans,
    };
    let json = serde_json::to_vec(&stored).map_err(|source| crate::Error::Serialize {
        what: format!("the manifest of bundle {}", m.name),
        source,
    })?;
    blocks::compress(&format!("the manifest of bundle {}", m.name), &json)
}

/// Decodes a stored manifest; the error says what is wrong, for the caller to wrap.
pub(super) fn decode(stored: &[u8]) -> Result<Manifest, String> {
    let json =
        blocks::decompress(stored, MAX_MANIFEST_BYTES).map_err(|why| format!("manifest: {why}"))?;
    let s: StoredManifest = serde_json::from_slice(&json).map_err(|e| format!("manifest: {e}"))?;
    let lookup = |table: &str, len: usize, i: u32, plan: &str| {
        if (i as usize) < len {
            Ok(i as usize)
        } else {
            Err(format!("plan {plan} refers to {table} #{i} of {len}"))
        }
    };
    let mut plans = Vec::with_capacity(s.plans.len());
    for p in s.plans {
        let fragment = |i: u32| {
            lookup("fragment", s.fragments.len(), i, &p.name).map(|i| s.fragments[i].name.clone())
        };
        plans.push(PlanRecord {
            kernel: s.kernels[lookup("kernel", s.kernels.len(), p.kernel, &p.name)?].clone(),
            entry: fragment(p.entry)?,
            fragments: p
                .fragments
                .iter()
                .map(|&i| fragment(i))
                .collect::<Result<_, _>>()?,
            options: s.option_lists
                [lookup("option list", s.option_lists.len(), p.options, &p.name)?]
            .clone(),
            min_arch: p.min_arch,
            arch_specific: p.arch_specific,
            name: p.name,
        });
    }
    Ok(Manifest {
        name: s.name,
        fragments: s.fragments,
        blocks: s.blocks,
        plans,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Role;
    use crate::digest::Digest;
    use crate::version::Version;

    fn fragment(name: &str) -> FragmentRecord {
        FragmentRecord {
            name: name.into(),
            role: Role::Device,
            exports: vec![],
            requires: vec![],
            producer: Version::new(13, 0),
            target: "lto_75".into(),
            content_hash: Digest::of(name.as_bytes()),
            compile_key: Digest::of(b"k"),
            block: 0,
            offset: 0,
            raw_bytes: 1,
        }
    }

    fn manifest() -> Manifest {
        let plan = |name: &str, kernel: &str, options: &[&str]| PlanRecord {
            name: name.into(),
            kernel: kernel.into(),
            entry: "a".into(),
            fragments: vec!["c".into(), "b".into()],
            options: options.iter().map(|o| o.to_string()).collect(),
            min_arch: (name == "p2").then_some(80),
            arch_specific: name == "p3",
        };
        Manifest {
            name: "t".into(),
            fragments: vec![fragment("a"), fragment("b"), fragment("c")],
            blocks: vec![Block {
                offset: 0,
                stored_bytes: 3,
                raw_bytes: 3,
            }],
            plans: vec![
                plan("p1", "k1", &["-O3"]),
                plan("p2", "k2", &["-O3"]),
                plan("p3", "k1", &[]),
            ],
        }
    }

    #[test]
    fn round_trip_with_shared_tables() {
        let m = manifest();
        let stored = encode(&m).unwrap();
        assert_eq!(decode(&stored).unwrap(), m);
        let json = blocks::decompress(&stored, 1 << 20).unwrap();
        let s: StoredManifest = serde_json::from_slice(&json).unwrap();
        assert_eq!(s.kernels, ["k1", "k2"]);
        assert_eq!(s.option_lists.len(), 2);
        assert_eq!(s.plans[0].fragments, [2, 1]);
    }

    #[test]
    fn indices_out_of_range_are_named() {
        let m = manifest();
        let json = blocks::decompress(&encode(&m).unwrap(), 1 << 20).unwrap();
        let mut s: StoredManifest = serde_json::from_slice(&json).unwrap();
        s.plans[1].fragments.push(9);
        let bad = blocks::compress("t", &serde_json::to_vec(&s).unwrap()).unwrap();
        assert_eq!(
            decode(&bad).unwrap_err(),
            "plan p2 refers to fragment #9 of 3"
        );
        s.plans[1].fragments.pop();
        s.plans[0].options = 5;
        let bad = blocks::compress("t", &serde_json::to_vec(&s).unwrap()).unwrap();
        assert!(decode(&bad).unwrap_err().contains("option list #5"));
        assert!(decode(b"junk").unwrap_err().starts_with("manifest:"));
    }
}
