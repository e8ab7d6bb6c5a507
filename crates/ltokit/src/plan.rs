//! Plans: exactly what to link for one kernel variant on one target, and the key that
//! names the result.
//!
//! A plan is an entry fragment, device fragments in link order, link options and an
//! exact target (with its `a`/`f` suffix). Its [`PlanKey`] hashes the inputs' content
//! hashes, the options, the target, the nvJitLink version and the cache format version —
//! never names — so two plans that would link the same bytes share one key, and a new
//! linker or target can never be served a stale cubin.

use std::borrow::Cow;
use std::sync::Arc;

use crate::arch::{CodeKind, Target};
use crate::bundle::Bundle;
use crate::digest::{Digest, FieldHasher};
use crate::error::Result;
use crate::fragment::Fragment;
use crate::link::{self, InputFormat, LinkInput, LinkOutput};
use crate::toolkit::Version;

/// Version of the cache format; part of every key, so a format change invalidates
/// every cached cubin at once.
pub const CACHE_FORMAT_VERSION: u32 = 1;

/// The key of a linked plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlanKey(pub Digest);

impl std::fmt::Display for PlanKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Clone)]
enum Source {
    Bytes(Arc<[u8]>),
    Bundle(Arc<Bundle>, usize),
}

/// One input of a plan: its identity (content hash) and where its bytes come from.
#[derive(Clone)]
pub struct PlanInput {
    /// Name for logs and errors.
    pub name: String,
    /// What the bytes are.
    pub format: InputFormat,
    /// BLAKE3 of the bytes.
    pub hash: Digest,
    /// The IR target, when known.
    pub ir_target: Option<Target>,
    /// The producing toolkit, when known.
    pub producer: Option<Version>,
    source: Source,
}

impl std::fmt::Debug for PlanInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}, {})",
            self.name,
            self.format,
            self.hash.short(12)
        )
    }
}

impl PlanInput {
    /// An input from bytes; the format is sniffed.
    pub fn from_bytes(name: impl Into<String>, data: impl Into<Arc<[u8]>>) -> Result<Self> {
        let data: Arc<[u8]> = data.into();
        let probe = LinkInput::from_bytes(name, Cow::Borrowed(&data[..]))?;
        Ok(PlanInput {
            hash: Digest::of(&data),
            name: probe.name,
            format: probe.format,
            ir_target: probe.target,
            producer: probe.producer,
            source: Source::Bytes(data),
        })
    }

    /// A compiled fragment.
    pub fn from_fragment(fragment: &Fragment) -> Self {
        PlanInput {
            name: fragment.name.clone(),
            format: InputFormat::LtoIr,
            hash: Digest::of(&fragment.ltoir),
            ir_target: Some(fragment.target),
            producer: Some(fragment.producer),
            source: Source::Bytes(fragment.ltoir.clone().into()),
        }
    }

    pub(crate) fn from_bundle(
        bundle: Arc<Bundle>,
        index: usize,
        name: String,
        hash: Digest,
        ir_target: Target,
        producer: Version,
    ) -> Self {
        PlanInput {
            name,
            format: InputFormat::LtoIr,
            hash,
            ir_target: Some(ir_target),
            producer: Some(producer),
            source: Source::Bundle(bundle, index),
        }
    }

    /// The input's bytes (a bundle fragment is decompressed and verified on first use).
    pub fn bytes(&self) -> Result<Arc<[u8]>> {
        match &self.source {
            Source::Bytes(b) => Ok(Arc::clone(b)),
            Source::Bundle(bundle, index) => bundle.fragment_bytes(*index),
        }
    }
}

/// What to link for one kernel variant on one exact target.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Human name (not part of the key).
    pub name: String,
    /// The entry kernel's symbol.
    pub kernel: String,
    /// The exact machine target, `sm_XY[a|f]`.
    pub target: Target,
    /// Extra nvJitLink options.
    pub options: Vec<String>,
    /// Entry first, then device fragments in link order.
    pub inputs: Vec<PlanInput>,
    /// Why the plan cannot run on its target, when its bundle says so (a minimum
    /// architecture, or an `a`-only feature): providers skip it.
    pub unsupported: Option<String>,
}

impl Plan {
    /// Makes a plan; `target` is taken as the machine target of its architecture.
    pub fn new(
        name: String,
        kernel: String,
        target: Target,
        options: Vec<String>,
        inputs: Vec<PlanInput>,
    ) -> Self {
        Plan {
            name,
            kernel,
            target: target.with_kind(CodeKind::Sass),
            options,
            inputs,
            unsupported: None,
        }
    }

    /// The same plan for another target.
    pub fn retargeted(&self, target: Target) -> Plan {
        Plan {
            target: target.with_kind(CodeKind::Sass),
            ..self.clone()
        }
    }

    /// The plan's key for a given nvJitLink version.
    pub fn key(&self, linker: Version) -> PlanKey {
        let mut h = FieldHasher::new("ltokit plan key");
        h.field(&CACHE_FORMAT_VERSION.to_le_bytes());
        h.field(&linker.major.to_le_bytes())
            .field(&linker.minor.to_le_bytes());
        h.field(self.target.to_string().as_bytes());
        h.field(&(self.options.len() as u64).to_le_bytes());
        for option in &self.options {
            h.field(option.as_bytes());
        }
        h.field(&(self.inputs.len() as u64).to_le_bytes());
        for input in &self.inputs {
            h.field(format!("{:?}", input.format).as_bytes());
            h.field(input.hash.as_bytes());
        }
        PlanKey(h.finish())
    }

    /// One line naming the plan: entry, fragments, target, options.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
        let (entry, rest) = names
            .split_first()
            .map_or(("(none)", &[][..]), |(e, r)| (*e, r));
        format!(
            "plan {:?} (kernel {}, entry {entry}, fragments [{}], target {}, options [{}])",
            self.name,
            self.kernel,
            rest.join(", "),
            self.target,
            self.options.join(" ")
        )
    }

    /// Links the plan with nvJitLink.
    pub fn link(&self) -> Result<LinkOutput> {
        let bytes: Vec<Arc<[u8]>> = self
            .inputs
            .iter()
            .map(PlanInput::bytes)
            .collect::<Result<_>>()?;
        let inputs: Vec<LinkInput> = self
            .inputs
            .iter()
            .zip(&bytes)
            .map(|(input, data)| LinkInput {
                name: input.name.clone(),
                format: input.format,
                data: Cow::Borrowed(&data[..]),
                target: input.ir_target,
                producer: input.producer,
            })
            .collect();
        link::link(&inputs, self.target, &self.options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(target: &str, options: &[&str], inputs: &[&[u8]]) -> Plan {
        let ir = |b: &[u8]| {
            let mut v = vec![0xed, 0x43, 0x4e, 0x7f, 1, 65];
            v.extend_from_slice(b);
            PlanInput::from_bytes("x", v).unwrap()
        };
        Plan::new(
            "p".into(),
            "k".into(),
            target.parse().unwrap(),
            options.iter().map(|s| s.to_string()).collect(),
            inputs.iter().map(|b| ir(b)).collect(),
        )
    }

    #[test]
    fn key_covers_target_suffix_options_order_and_linker() {
        let v = Version::new(13, 0);
        let base = plan("sm_90", &["-O3"], &[b"a", b"b"]).key(v);
        assert_eq!(base, plan("sm_90", &["-O3"], &[b"a", b"b"]).key(v));
        assert_ne!(base, plan("sm_90a", &["-O3"], &[b"a", b"b"]).key(v));
        assert_ne!(base, plan("sm_90", &[], &[b"a", b"b"]).key(v));
        assert_ne!(base, plan("sm_90", &["-O3"], &[b"b", b"a"]).key(v));
        assert_ne!(base, plan("sm_90", &["-O3"], &[b"a", b"c"]).key(v));
        assert_ne!(
            base,
            plan("sm_90", &["-O3"], &[b"a", b"b"]).key(Version::new(13, 1))
        );
        // The name is not part of the key.
        let mut renamed = plan("sm_90", &["-O3"], &[b"a", b"b"]);
        renamed.name = "other".into();
        assert_eq!(base, renamed.key(v));
    }
}
