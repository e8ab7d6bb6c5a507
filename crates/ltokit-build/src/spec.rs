//! The bundle spec and the expansion of its variant matrix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ltokit::bundle::{PlanRecord, Role};
use ltokit::{Error, Result, Target};

/// A bundle spec, as written in JSON.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleSpec {
    /// The bundle's name.
    pub name: String,
    /// Architecture the IR is for (default `sm_75`: base IR links for it and every newer GPU).
    #[serde(default)]
    pub target: Option<String>,
    /// Include directories, relative to the spec (the spec's own directory always is one).
    #[serde(default)]
    pub include_dirs: Vec<String>,
    /// The variant matrix: axis name → values.
    #[serde(default)]
    pub axes: BTreeMap<String, Vec<String>>,
    /// Fragment templates.
    pub fragments: Vec<FragmentTemplate>,
    /// Plan templates.
    #[serde(default)]
    pub plans: Vec<PlanTemplate>,
}

fn default_role() -> Role {
    Role::Device
}

/// A fragment template; `{axis}` placeholders expand it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragmentTemplate {
    /// Name (unique after expansion).
    pub name: String,
    /// `entry` or `device` (default).
    #[serde(default = "default_role")]
    pub role: Role,
    /// Source file, relative to the spec.
    pub source: String,
    /// Preprocessor defines.
    #[serde(default)]
    pub defines: BTreeMap<String, String>,
    /// Template instantiations to compile and export.
    #[serde(default)]
    pub name_expressions: Vec<String>,
    /// Extra NVRTC options.
    #[serde(default)]
    pub options: Vec<String>,
    /// Symbols it defines.
    #[serde(default)]
    pub exports: Vec<String>,
    /// Symbols it needs.
    #[serde(default)]
    pub requires: Vec<String>,
    /// The IR target of this fragment when it is not the spec's (e.g. `sm_80` for
    /// instructions older targets lack). Every plan that links it must declare a
    /// `min_arch` at least this target's number.
    #[serde(default)]
    pub target: Option<String>,
}

/// A plan template; `{axis}` placeholders expand it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanTemplate {
    /// Name (unique after expansion).
    pub name: String,
    /// Entry kernel symbol.
    pub kernel: String,
    /// Entry fragment name.
    pub entry: String,
    /// Device fragment names, in link order.
    #[serde(default)]
    pub fragments: Vec<String>,
    /// nvJitLink options.
    #[serde(default)]
    pub options: Vec<String>,
    /// The lowest architecture number the plan runs on (providers skip older targets).
    #[serde(default)]
    pub min_arch: Option<u32>,
    /// The plan needs an arch-specific (`a`) target.
    #[serde(default)]
    pub arch_specific: bool,
}

/// One fragment after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedFragment {
    /// Unique name.
    pub name: String,
    /// Entry or device.
    pub role: Role,
    /// Source file, relative to the spec.
    pub source: String,
    /// Defines.
    pub defines: BTreeMap<String, String>,
    /// Name expressions.
    pub name_expressions: Vec<String>,
    /// NVRTC options.
    pub options: Vec<String>,
    /// Exports.
    pub exports: Vec<String>,
    /// Requirements.
    pub requires: Vec<String>,
    /// The IR target it is compiled for (the spec's unless the template names one).
    pub target: Target,
}

impl BundleSpec {
    /// Reads a spec file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::BadSpec {
            spec: path.display().to_string(),
            why: format!("not a valid bundle spec: {e}"),
        })
    }

    /// The IR target fragments are compiled for unless they name their own (default
    /// `sm_75`: base IR links for it and every newer GPU).
    pub fn default_target(&self) -> Result<Target> {
        self.target.as_deref().unwrap_or("sm_75").parse()
    }

    /// Expands the matrix into fragments and plans; names must come out unique, every
    /// plan must name fragments that exist, and a plan that links a fragment compiled for
    /// a newer target than the spec's must declare a `min_arch` at least that new.
    pub fn expand(&self) -> Result<(Vec<ExpandedFragment>, Vec<PlanRecord>)> {
        let default_target = self.default_target()?;
        for (axis, values) in &self.axes {
            if values.is_empty() {
                return Err(Error::BadSpec {
                    spec: self.name.clone(),
                    why: format!("axis {axis} has no values"),
                });
            }
        }
        let mut fragments = Vec::new();
        for t in &self.fragments {
            let strings = template_strings_fragment(t);
            for binding in self.bindings(&strings)? {
                let sub = |s: &str| substitute(s, &binding);
                let target = match &t.target {
                    Some(name) => sub(name).parse().map_err(|e| Error::BadSpec {
                        spec: self.name.clone(),
                        why: format!("fragment {}: target: {e}", sub(&t.name)),
                    })?,
                    None => default_target,
                };
                fragments.push(ExpandedFragment {
                    name: sub(&t.name),
                    role: t.role,
                    source: sub(&t.source),
                    defines: t.defines.iter().map(|(k, v)| (sub(k), sub(v))).collect(),
                    name_expressions: t.name_expressions.iter().map(|s| sub(s)).collect(),
                    options: t.options.iter().map(|s| sub(s)).collect(),
                    exports: t.exports.iter().map(|s| sub(s)).collect(),
                    requires: t.requires.iter().map(|s| sub(s)).collect(),
                    target,
                });
            }
        }
        let mut seen = BTreeSet::new();
        for f in &fragments {
            if !seen.insert(f.name.as_str()) {
                return Err(Error::BadSpec { spec: self.name.clone(), why: format!("fragment name {} appears twice after expansion; put every axis it varies over in its name", f.name)});
            }
        }
        let mut plans = Vec::new();
        for t in &self.plans {
            let strings: Vec<&str> = [t.name.as_str(), &t.kernel, &t.entry]
                .into_iter()
                .chain(t.fragments.iter().map(String::as_str))
                .chain(t.options.iter().map(String::as_str))
                .collect();
            for binding in self.bindings(&strings)? {
                let sub = |s: &str| substitute(s, &binding);
                let plan = PlanRecord {
                    name: sub(&t.name),
                    kernel: sub(&t.kernel),
                    entry: sub(&t.entry),
                    fragments: t.fragments.iter().map(|s| sub(s)).collect(),
                    options: t.options.iter().map(|s| sub(s)).collect(),
                    min_arch: t.min_arch,
                    arch_specific: t.arch_specific,
                };
                for name in std::iter::once(&plan.entry).chain(&plan.fragments) {
                    let Some(f) = fragments.iter().find(|f| &f.name == name) else {
                        return Err(Error::BadSpec {
                            spec: self.name.clone(),
                            why: format!(
                                "plan {} names fragment {name}, which the spec does not define",
                                plan.name
                            ),
                        });
                    };
                    let needs = f.target.number();
                    if needs > default_target.number() && plan.min_arch.unwrap_or(0) < needs {
                        return Err(Error::BadSpec {
                            spec: self.name.clone(),
                            why: format!(
                                "plan {} links fragment {name}, compiled for {}, but its min_arch is {}; give the plan \"min_arch\": {needs} (or more) so that older targets skip it",
                                plan.name,
                                f.target,
                                plan.min_arch.map_or("not set".to_string(), |m| m.to_string())
                            ),
                        });
                    }
                }
                plans.push(plan);
            }
        }
        let mut plan_names = BTreeSet::new();
        for p in &plans {
            if !plan_names.insert(p.name.as_str()) {
                return Err(Error::BadSpec {
                    spec: self.name.clone(),
                    why: format!("plan name {} appears twice after expansion", p.name),
                });
            }
        }
        Ok((fragments, plans))
    }

    /// Every assignment of values to the axes that `strings` mention.
    fn bindings(&self, strings: &[&str]) -> Result<Vec<BTreeMap<String, String>>> {
        let mut used = BTreeSet::new();
        for s in strings {
            for name in placeholders(s) {
                if !self.axes.contains_key(&name) {
                    return Err(Error::BadSpec {
                        spec: self.name.clone(),
                        why: format!("{s:?} uses {{{name}}}, but there is no axis {name}"),
                    });
                }
                used.insert(name);
            }
        }
        let mut out = vec![BTreeMap::new()];
        for axis in used {
            let values = &self.axes[&axis];
            let mut next = Vec::with_capacity(out.len() * values.len());
            for b in &out {
                for v in values {
                    let mut b = b.clone();
                    b.insert(axis.clone(), v.clone());
                    next.push(b);
                }
            }
            out = next;
        }
        Ok(out)
    }
}

fn template_strings_fragment(t: &FragmentTemplate) -> Vec<&str> {
    let mut v: Vec<&str> = vec![&t.name, &t.source];
    v.extend(t.target.as_deref());
    for (k, val) in &t.defines {
        v.push(k);
        v.push(val);
    }
    v.extend(
        t.name_expressions
            .iter()
            .chain(&t.options)
            .chain(&t.exports)
            .chain(&t.requires)
            .map(String::as_str),
    );
    v
}

/// `{name}` placeholders in `s` (identifier characters only).
fn placeholders(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if !after[..close].is_empty()
                    && after[..close]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                out.push(after[..close].to_string());
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

fn substitute(s: &str, binding: &BTreeMap<String, String>) -> String {
    let mut out = s.to_string();
    for (k, v) in binding {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> BundleSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_fragment_for_a_newer_target_needs_plans_that_require_it() {
        let with_plan = |plan_extra: &str| {
            spec(&format!(
                r#"{{
                "name": "t",
                "axes": {{ "t": ["f32", "tf32"] }},
                "fragments": [
                    {{ "name": "e", "role": "entry", "source": "e.cu" }},
                    {{ "name": "tile_f32", "source": "t.cu" }},
                    {{ "name": "tile_tf32", "source": "t.cu", "target": "sm_80" }}
                ],
                "plans": [ {{ "name": "p_{{t}}", "kernel": "k", "entry": "e", "fragments": ["tile_{{t}}"] {plan_extra} }} ]
            }}"#
            ))
        };
        // Without min_arch the plan that links the sm_80 fragment is refused, by name.
        let err = with_plan("").expand().unwrap_err().to_string();
        assert!(
            err.contains("plan p_tf32 links fragment tile_tf32")
                && err.contains("\"min_arch\": 80"),
            "{err}"
        );
        let err = with_plan(r#", "min_arch": 75"#)
            .expand()
            .unwrap_err()
            .to_string();
        assert!(err.contains("its min_arch is 75"), "{err}");
        // With it, each fragment keeps its own target; the others take the spec's.
        let (fragments, plans) = with_plan(r#", "min_arch": 80"#).expand().unwrap();
        let target = |name: &str| fragments.iter().find(|f| f.name == name).unwrap().target;
        assert_eq!(target("tile_tf32").number(), 80);
        assert_eq!(target("tile_f32").number(), 75);
        assert_eq!(target("e").number(), 75);
        assert_eq!(plans.len(), 2);
        // A target that is not one is a clear error naming the fragment.
        let bad = spec(
            r#"{ "name": "t", "fragments": [ { "name": "f", "source": "f.cu", "target": "sm_8x" } ] }"#,
        );
        let err = bad.expand().unwrap_err().to_string();
        assert!(err.contains("fragment f: target"), "{err}");
    }

    #[test]
    fn matrix_expands_templates_over_the_axes_they_use() {
        let s = spec(
            r#"{
            "name": "t",
            "axes": { "op": ["a", "b"], "w": ["1", "2", "4"] },
            "fragments": [
                { "name": "entry_w{w}", "role": "entry", "source": "e.cu", "defines": { "W": "{w}" } },
                { "name": "op_{op}", "source": "o.cu", "defines": { "OP_{op}": "1" } }
            ],
            "plans": [ { "name": "p_{op}_{w}", "kernel": "k", "entry": "entry_w{w}", "fragments": ["op_{op}"] } ]
        }"#,
        );
        let (fragments, plans) = s.expand().unwrap();
        assert_eq!(fragments.len(), 5);
        assert_eq!(fragments[3].defines.get("OP_a"), Some(&"1".to_string()));
        assert_eq!(plans.len(), 6);
        assert!(plans
            .iter()
            .any(|p| p.name == "p_b_4" && p.entry == "entry_w4" && p.fragments == ["op_b"]));
    }

    #[test]
    fn bad_specs_are_clear_errors() {
        let unknown_axis =
            spec(r#"{ "name": "t", "fragments": [ { "name": "f_{x}", "source": "f.cu" } ] }"#);
        assert!(unknown_axis
            .expand()
            .unwrap_err()
            .to_string()
            .contains("no axis x"));
        let dup = spec(
            r#"{ "name": "t", "axes": { "x": ["1", "2"] }, "fragments": [ { "name": "f", "source": "f.cu", "defines": { "X": "{x}" } } ] }"#,
        );
        assert!(dup
            .expand()
            .unwrap_err()
            .to_string()
            .contains("appears twice"));
        let missing = spec(
            r#"{ "name": "t", "fragments": [ { "name": "e", "role": "entry", "source": "e.cu" } ],
            "plans": [ { "name": "p", "kernel": "k", "entry": "e", "fragments": ["nope"] } ] }"#,
        );
        assert!(missing.expand().unwrap_err().to_string().contains("nope"));
        assert!(serde_json::from_str::<BundleSpec>(
            r#"{ "name": "t", "fragments": [], "typo": 1 }"#
        )
        .is_err());
    }
}
