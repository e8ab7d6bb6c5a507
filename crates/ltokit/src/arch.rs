//! GPU architecture names and the rules for which code runs or links where.
//!
//! A [`Target`] is one of `sm_XY` (machine code, SASS), `compute_XY` (PTX or LTO-IR for
//! a virtual architecture) or `lto_XY` (nvcc's spelling for LTO-IR), each with an
//! optional `a` (arch-specific: exactly X.Y) or `f` (family: same major, minor >= Y)
//! suffix. The compatibility rules are those of the reference notes, §5, which match what
//! nvJitLink and the driver do.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// What kind of code a target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeKind {
    /// `sm_XY`: machine code (a cubin) for a real GPU.
    Sass,
    /// `compute_XY`: PTX (or LTO-IR) for a virtual architecture.
    Compute,
    /// `lto_XY`: LTO-IR, nvcc's `-code=` spelling.
    Lto,
}

/// The `a` / `f` suffix of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// No suffix: forward compatible within a major (SASS) or across majors (IR).
    Base,
    /// `f`: family-specific, runs on the same major with minor >= this one.
    Family,
    /// `a`: arch-specific, runs only on exactly this compute capability.
    Specific,
}

impl Variant {
    fn suffix(self) -> &'static str {
        match self {
            Variant::Base => "",
            Variant::Family => "f",
            Variant::Specific => "a",
        }
    }
}

/// A compute capability `major.minor`, as the driver reports it for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ComputeCapability {
    /// Major version (9 for Hopper).
    pub major: u32,
    /// Minor version (0 for the H100/H200).
    pub minor: u32,
}

impl ComputeCapability {
    /// Makes a compute capability.
    pub const fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A compilation or link target such as `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, `lto_75`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Target {
    /// What kind of code the target names.
    pub kind: CodeKind,
    /// The compute capability it is built for.
    pub cc: ComputeCapability,
    /// Its `a` / `f` suffix.
    pub variant: Variant,
}

/// The largest architecture number accepted when parsing (sm_255); keeps minor < 10.
const MAX_ARCH_NUMBER: u32 = 255;

impl Target {
    /// Machine code for a compute capability: `sm_XY` with the given suffix.
    pub const fn sass(major: u32, minor: u32, variant: Variant) -> Self {
        Target {
            kind: CodeKind::Sass,
            cc: ComputeCapability::new(major, minor),
            variant,
        }
    }

    /// The plain `sm_Mm` target of a device: what to link for when nothing else is asked.
    pub const fn native(cc: ComputeCapability) -> Self {
        Target::sass(cc.major, cc.minor, Variant::Base)
    }

    /// Builds a target from the number used by fatbins and nvcc (`90` → 9.0, `100` → 10.0).
    pub fn from_number(kind: CodeKind, number: u32, variant: Variant) -> Result<Self> {
        if !(10..=MAX_ARCH_NUMBER).contains(&number) {
            return Err(Error::InvalidTarget {
                text: number.to_string(),
                why: format!("architecture number must be between 10 and {MAX_ARCH_NUMBER}"),
            });
        }
        Ok(Target {
            kind,
            cc: ComputeCapability::new(number / 10, number % 10),
            variant,
        })
    }

    /// The architecture number (`90` for 9.0, `120` for 12.0).
    pub fn number(&self) -> u32 {
        self.cc.major * 10 + self.cc.minor
    }

    /// A stable, explicit encoding of the target for keys: kind code, major, minor,
    /// variant code, each a little-endian `u32`. The codes never change meaning; a new
    /// kind or variant gets a new code.
    pub fn key_code(&self) -> [u8; 16] {
        let kind: u32 = match self.kind {
            CodeKind::Sass => 1,
            CodeKind::Compute => 2,
            CodeKind::Lto => 3,
        };
        let variant: u32 = match self.variant {
            Variant::Base => 0,
            Variant::Family => 1,
            Variant::Specific => 2,
        };
        let mut out = [0u8; 16];
        for (slot, value) in
            out.chunks_exact_mut(4)
                .zip([kind, self.cc.major, self.cc.minor, variant])
        {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        out
    }

    /// The same architecture and suffix, as another kind of code.
    pub fn with_kind(self, kind: CodeKind) -> Self {
        Target { kind, ..self }
    }

    /// The `-arch=` value nvJitLink expects: always `sm_XY[a|f]`.
    pub fn link_arch(&self) -> String {
        self.with_kind(CodeKind::Sass).to_string()
    }

    /// The `-arch=` value NVRTC expects when producing LTO-IR: `compute_XY[a|f]`.
    /// (NVRTC rejects `lto_XY`; `sm_XY` and `compute_XY` give identical LTO-IR.)
    pub fn nvrtc_arch(&self) -> String {
        self.with_kind(CodeKind::Compute).to_string()
    }

    /// Rule 1 of §5: may a *cubin* built for this target be loaded on a device of `cc`?
    ///
    /// Same major only; `a` needs the exact minor, base and `f` need a minor <= the
    /// device's. Returns false for non-SASS targets (PTX and LTO-IR need a JIT step).
    pub fn cubin_runs_on(&self, cc: ComputeCapability) -> bool {
        if self.kind != CodeKind::Sass || self.cc.major != cc.major {
            return false;
        }
        match self.variant {
            Variant::Base | Variant::Family => self.cc.minor <= cc.minor,
            Variant::Specific => self.cc.minor == cc.minor,
        }
    }

    /// Rule 2 of §5: may IR (LTO-IR or PTX) built for this target be linked for `link`?
    ///
    /// Base IR links for any target of equal or higher compute capability, across majors;
    /// `f` IR only within its major at an equal or higher minor; `a` IR only for the
    /// arch-specific target of exactly its compute capability.
    pub fn ir_links_for(&self, link: &Target) -> bool {
        let ir = self.cc;
        let to = link.cc;
        match self.variant {
            Variant::Base => ir <= to,
            Variant::Family => ir.major == to.major && ir.minor <= to.minor,
            Variant::Specific => ir == to && link.variant == Variant::Specific,
        }
    }

    /// Picks the best prebuilt cubin target for a device among `candidates` (rule 1):
    /// `a` on the exact minor first, then `f`, then base; among equals the highest minor.
    pub fn best_cubin_for<'a, I>(candidates: I, cc: ComputeCapability) -> Option<&'a Target>
    where
        I: IntoIterator<Item = &'a Target>,
    {
        candidates
            .into_iter()
            .filter(|t| t.cubin_runs_on(cc))
            .max_by_key(|t| (t.variant, t.cc.minor))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            CodeKind::Sass => "sm",
            CodeKind::Compute => "compute",
            CodeKind::Lto => "lto",
        };
        write!(f, "{prefix}_{}{}", self.number(), self.variant.suffix())
    }
}

impl FromStr for Target {
    type Err = Error;

    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, `lto_75` (case-insensitive).
    fn from_str(text: &str) -> Result<Self> {
        let invalid = |why: &str| {
            Error::InvalidTarget {
            text: text.to_string(),
            why: format!("{why}; expected sm_XY, compute_XY or lto_XY with an optional a or f suffix (e.g. sm_90, sm_90a, sm_100f, compute_80)"),
        }
        };
        let lower = text.trim().to_ascii_lowercase();
        let (kind, rest) = if let Some(rest) = lower.strip_prefix("sm_") {
            (CodeKind::Sass, rest)
        } else if let Some(rest) = lower.strip_prefix("compute_") {
            (CodeKind::Compute, rest)
        } else if let Some(rest) = lower.strip_prefix("lto_") {
            (CodeKind::Lto, rest)
        } else {
            return Err(invalid("unknown prefix"));
        };
        let (digits, variant) = match rest.strip_suffix('a') {
            Some(d) => (d, Variant::Specific),
            None => match rest.strip_suffix('f') {
                Some(d) => (d, Variant::Family),
                None => (rest, Variant::Base),
            },
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3 {
            return Err(invalid("the architecture number must be 2 or 3 digits"));
        }
        let number: u32 = digits.parse().map_err(|_| invalid("bad number"))?;
        Target::from_number(kind, number, variant).map_err(|_| invalid("number out of range"))
    }
}

impl PartialOrd for Target {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Target {
    /// Orders by compute capability, then suffix (base < f < a), then kind.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.cc, self.variant, self.kind).cmp(&(other.cc, other.variant, other.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Target {
        s.parse().unwrap()
    }
    const fn cc(major: u32, minor: u32) -> ComputeCapability {
        ComputeCapability::new(major, minor)
    }

    #[test]
    fn parse_print_round_trip() {
        for s in [
            "sm_75",
            "sm_80",
            "sm_90",
            "sm_90a",
            "sm_100f",
            "sm_120a",
            "compute_90",
            "compute_100f",
            "lto_75",
            "lto_90a",
        ] {
            assert_eq!(t(s).to_string(), s);
        }
        assert_eq!(t("SM_90A").to_string(), "sm_90a");
        assert_eq!(t("sm_100").cc, cc(10, 0));
        assert_eq!(t("sm_86").cc, cc(8, 6));
    }

    #[test]
    fn parse_rejects_garbage() {
        for s in [
            "", "sm", "sm_", "sm_9", "sm_x0", "sm_90b", "gfx90a", "sm_9000", "sm_90af", "sm_1000",
        ] {
            let err = s.parse::<Target>().unwrap_err().to_string();
            assert!(err.contains("expected sm_XY"), "{s}: {err}");
        }
    }

    #[test]
    fn order_is_by_capability_then_suffix() {
        let mut v = [
            t("sm_100"),
            t("sm_90a"),
            t("sm_75"),
            t("sm_90"),
            t("sm_90f"),
            t("sm_80"),
        ];
        v.sort();
        let names: Vec<String> = v.iter().map(|t| t.to_string()).collect();
        assert_eq!(
            names,
            ["sm_75", "sm_80", "sm_90", "sm_90f", "sm_90a", "sm_100"]
        );
    }

    #[test]
    fn cubin_rule_table() {
        // sm_80 runs on 8.0, 8.6, 8.7, 8.9 but not 9.0.
        for m in [0, 6, 7, 9] {
            assert!(t("sm_80").cubin_runs_on(cc(8, m)));
        }
        assert!(!t("sm_80").cubin_runs_on(cc(9, 0)));
        assert!(!t("sm_86").cubin_runs_on(cc(8, 0)));
        // a: exactly X.Y.
        assert!(t("sm_90a").cubin_runs_on(cc(9, 0)));
        assert!(!t("sm_100a").cubin_runs_on(cc(10, 3)));
        // f: same major, minor >= Y.
        assert!(t("sm_100f").cubin_runs_on(cc(10, 0)));
        assert!(t("sm_100f").cubin_runs_on(cc(10, 3)));
        assert!(!t("sm_100f").cubin_runs_on(cc(11, 0)));
        assert!(t("sm_120f").cubin_runs_on(cc(12, 1)));
        // Never across majors, never for IR.
        assert!(!t("sm_90").cubin_runs_on(cc(10, 0)));
        assert!(!t("compute_90").cubin_runs_on(cc(9, 0)));
    }

    #[test]
    fn ir_rule_matches_nvjitlink_table() {
        // Rows of the reference table: (IR, accepted for, rejected for).
        let rows: [(&str, &[&str], &[&str]); 3] = [
            (
                "lto_100f",
                &["sm_100", "sm_100f", "sm_103", "sm_103f"],
                &["sm_110", "sm_120"],
            ),
            ("lto_90a", &["sm_90a"], &["sm_90", "sm_100"]),
            (
                "lto_90",
                &["sm_90", "sm_90a", "sm_100f", "sm_120a"],
                &["sm_80", "sm_89"],
            ),
        ];
        for (ir, ok, bad) in rows {
            for link in ok {
                assert!(t(ir).ir_links_for(&t(link)), "{ir} should link for {link}");
            }
            for link in bad {
                assert!(
                    !t(ir).ir_links_for(&t(link)),
                    "{ir} should not link for {link}"
                );
            }
        }
    }

    #[test]
    fn best_cubin_prefers_a_then_f_then_highest_minor() {
        let pool = [
            t("sm_80"),
            t("sm_86"),
            t("sm_90"),
            t("sm_90a"),
            t("sm_100f"),
            t("sm_103a"),
        ];
        assert_eq!(Target::best_cubin_for(&pool, cc(9, 0)), Some(&t("sm_90a")));
        assert_eq!(Target::best_cubin_for(&pool, cc(8, 9)), Some(&t("sm_86")));
        assert_eq!(
            Target::best_cubin_for(&pool, cc(10, 3)),
            Some(&t("sm_103a"))
        );
        assert_eq!(
            Target::best_cubin_for(&pool, cc(10, 0)),
            Some(&t("sm_100f"))
        );
        assert_eq!(Target::best_cubin_for(&pool, cc(12, 0)), None);
    }

    #[test]
    fn arch_spellings_for_tools() {
        assert_eq!(t("lto_90a").link_arch(), "sm_90a");
        assert_eq!(t("sm_100f").nvrtc_arch(), "compute_100f");
    }
}
