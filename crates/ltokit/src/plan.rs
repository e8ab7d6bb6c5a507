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

use crate::arch::{CodeKind, Target, Variant};
use crate::digest::{Digest, FieldHasher};
use crate::error::{Error, Result};
use crate::fragment::Fragment;
use crate::link::{self, InputFormat, LinkInput, LinkOutput};
use crate::version::Version;

/// Version of the key encoding and cache format; part of every key, so a change of
/// either invalidates every cached cubin at once. Version 2: the explicit field encoding
/// of [`Plan::key`] (version 1 hashed `Debug` strings).
pub const CACHE_FORMAT_VERSION: u32 = 2;

/// The key of a linked plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlanKey(pub Digest);

impl std::fmt::Display for PlanKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Where a plan input's bytes come from when they are not held directly: a container of
/// fragments (a bundle) that decompresses and verifies them on first use.
pub trait FragmentSource: Send + Sync {
    /// The raw bytes of fragment `index`.
    fn fragment_bytes(&self, index: usize) -> Result<Arc<[u8]>>;
}

#[derive(Clone)]
enum Source {
    Bytes(Arc<[u8]>),
    Container(Arc<dyn FragmentSource>, usize),
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

    /// LTO-IR fragment `index` of `source`, whose content hash, IR target and producer
    /// are already known (from a manifest); the bytes are read only when linking.
    pub fn from_source(
        source: Arc<dyn FragmentSource>,
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
            source: Source::Container(source, index),
        }
    }

    /// The input's bytes (a bundle fragment is decompressed and verified on first use).
    pub fn bytes(&self) -> Result<Arc<[u8]>> {
        match &self.source {
            Source::Bytes(b) => Ok(Arc::clone(b)),
            Source::Container(source, index) => source.fragment_bytes(*index),
        }
    }
}

/// What a plan needs of its target, as its bundle declares it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requirements {
    /// The lowest architecture number the plan runs on (e.g. 100 for `sm_100`).
    pub min_arch: Option<u32>,
    /// Whether the plan needs an arch-specific (`a`) target (e.g. for wgmma).
    pub arch_specific: bool,
}

impl Requirements {
    /// What `target` lacks, in words (`needs sm_100 or newer`), or `None` when it has
    /// everything the plan needs.
    pub fn unmet_on(&self, target: &Target) -> Option<String> {
        if let Some(min) = self.min_arch {
            if target.number() < min {
                return Some(format!("needs sm_{min} or newer"));
            }
        }
        if self.arch_specific && target.variant != Variant::Specific {
            return Some(format!(
                "needs an arch-specific target (sm_{}a)",
                target.number()
            ));
        }
        None
    }
}

/// A plan left out of a provider, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SkippedPlan {
    /// Plan name.
    pub plan: String,
    /// What the target lacks (e.g. "needs sm_100 or newer").
    pub why: String,
}

/// What to link for one kernel variant on one exact target.
///
/// A plan can only exist for a target that meets its [`Requirements`]:
/// [`Plan::with_requirements`] and [`Plan::for_target`] refuse any other, so every path
/// that links or serves plans (the cache, warm-up, provider builds) gets the check.
/// The fields are fixed at construction; the content digest behind every key is computed
/// once there.
#[derive(Debug, Clone)]
pub struct Plan {
    name: String,
    kernel: String,
    target: Target,
    options: Vec<String>,
    inputs: Vec<PlanInput>,
    requirements: Requirements,
    content: Digest,
}

impl Plan {
    /// Makes a plan with no requirements; `target` is taken as the machine target of its
    /// architecture (`compute_90` → `sm_90`).
    pub fn new(
        name: impl Into<String>,
        kernel: impl Into<String>,
        target: Target,
        options: Vec<String>,
        inputs: Vec<PlanInput>,
    ) -> Self {
        let content = content_digest(&options, &inputs);
        Plan {
            name: name.into(),
            kernel: kernel.into(),
            target: target.with_kind(CodeKind::Sass),
            options,
            inputs,
            requirements: Requirements::default(),
            content,
        }
    }

    /// The plan with `requirements`; an error when its target does not meet them.
    pub fn with_requirements(self, requirements: Requirements) -> Result<Plan> {
        check(&self.name, &self.target, &requirements)?;
        Ok(Plan {
            requirements,
            ..self
        })
    }

    /// The same plan for another target; an error when that target does not meet the
    /// plan's requirements.
    pub fn for_target(&self, target: Target) -> Result<Plan> {
        let target = target.with_kind(CodeKind::Sass);
        check(&self.name, &target, &self.requirements)?;
        Ok(Plan {
            target,
            ..self.clone()
        })
    }

    /// Human name (not part of the key).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The entry kernel's symbol.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The exact machine target, `sm_XY[a|f]`.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Extra nvJitLink options.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// Entry first, then device fragments in link order.
    pub fn inputs(&self) -> &[PlanInput] {
        &self.inputs
    }

    /// What the plan needs of its target.
    pub fn requirements(&self) -> Requirements {
        self.requirements
    }

    /// The plan's identity inside one process (the in-memory cache's key): one process
    /// has one linker, so it leaves the linker version out, and a process served by a
    /// provider need not load nvJitLink to know it.
    pub fn memory_key(&self) -> PlanKey {
        self.key(Version::new(0, 0))
    }

    /// The plan's key for a given nvJitLink version.
    pub fn key(&self, linker: Version) -> PlanKey {
        self.key_on(self.target, linker)
    }

    /// The key the same inputs and options would have linked for the machine target
    /// `target` (already `sm_XY[a|f]`: providers check theirs when opened) by `linker`;
    /// how a provider for a neighbouring target looks the plan up.
    ///
    /// The encoding is explicit and versioned ([`CACHE_FORMAT_VERSION`]): length-prefixed
    /// fields of fixed-width integers and stable codes ([`Target::key_code`],
    /// [`InputFormat::key_code`]), never names or `Debug` text.
    pub(crate) fn key_on(&self, target: Target, linker: Version) -> PlanKey {
        let mut h = FieldHasher::new("ltokit plan key");
        h.field(&CACHE_FORMAT_VERSION.to_le_bytes())
            .field(&linker.major.to_le_bytes())
            .field(&linker.minor.to_le_bytes())
            .field(&target.key_code())
            .field(self.content.as_bytes());
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

fn check(plan: &str, target: &Target, requirements: &Requirements) -> Result<()> {
    match requirements.unmet_on(target) {
        None => Ok(()),
        Some(requirement) => Err(Error::UnsupportedPlan {
            plan: plan.to_string(),
            target: *target,
            requirement,
        }),
    }
}

/// The digest of what a plan links, independent of target and linker: the options and
/// each input's format code and content hash, in order.
fn content_digest(options: &[String], inputs: &[PlanInput]) -> Digest {
    let mut h = FieldHasher::new("ltokit plan content");
    h.field(&(options.len() as u64).to_le_bytes());
    for option in options {
        h.field(option.as_bytes());
    }
    h.field(&(inputs.len() as u64).to_le_bytes());
    for input in inputs {
        h.field(&[input.format.key_code()]);
        h.field(input.hash.as_bytes());
    }
    h.finish()
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
            "p",
            "k",
            target.parse().unwrap(),
            options.iter().map(|s| s.to_string()).collect(),
            inputs.iter().map(|b| ir(b)).collect(),
        )
    }

    /// The key encoding is pinned: a change here invalidates every cache and provider, so
    /// it must come with a new `CACHE_FORMAT_VERSION` (and then a new pinned value).
    #[test]
    fn key_encoding_is_pinned() {
        let key = plan("sm_90a", &["-O3"], &[b"a", b"b"]).key(Version::new(13, 0));
        assert_eq!(CACHE_FORMAT_VERSION, 2);
        assert_eq!(
            key.to_string(),
            "918a70d92f2b065644fc02a7d808f21c4280e62555c94306034e172782aa0935"
        );
    }

    #[test]
    fn requirements_decide_which_targets_a_plan_can_have() {
        let needs = Requirements {
            min_arch: Some(100),
            arch_specific: false,
        };
        let err = plan("sm_90", &[], &[b"a"])
            .with_requirements(needs)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("plan p cannot run on sm_90: it needs sm_100 or newer"),
            "{err}"
        );
        let p = plan("sm_100", &[], &[b"a"])
            .with_requirements(needs)
            .unwrap();
        assert!(p.for_target("sm_90".parse().unwrap()).is_err());
        assert_eq!(
            p.for_target("sm_120".parse().unwrap())
                .unwrap()
                .target()
                .number(),
            120
        );
        let a_only = Requirements {
            min_arch: None,
            arch_specific: true,
        };
        assert!(plan("sm_90", &[], &[b"a"])
            .with_requirements(a_only)
            .is_err());
        assert!(plan("sm_90a", &[], &[b"a"])
            .with_requirements(a_only)
            .is_ok());
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
        // The name and kernel are not part of the key.
        let p = plan("sm_90", &["-O3"], &[b"a", b"b"]);
        let renamed = Plan::new(
            "other",
            "k2",
            p.target(),
            p.options().to_vec(),
            p.inputs().to_vec(),
        );
        assert_eq!(base, renamed.key(v));
    }
}
