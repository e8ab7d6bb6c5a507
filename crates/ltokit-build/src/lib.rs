//! # ltokit-build
//!
//! Turns a declarative bundle spec (JSON) into an ltokit bundle: expands the variant
//! matrix, compiles every fragment to LTO-IR with NVRTC in parallel, and writes one
//! versioned, checksummed file. Fragments whose inputs did not change since the previous
//! bundle at the same path are reused, not recompiled.
//!
//! Use it from `build.rs`:
//!
//! ```no_run
//! let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("kernels.ltkb");
//! let report = ltokit_build::build_bundle(std::path::Path::new("kernels/bundle.json"), &out, 0).unwrap();
//! ltokit_build::emit_rerun_if_changed(&report);
//! // then in the crate: static BUNDLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.ltkb"));
//! ```
//!
//! A spec:
//!
//! ```json
//! {
//!   "name": "demo",
//!   "target": "sm_75",
//!   "axes": { "op": ["square", "abs"], "scale": ["1", "2"] },
//!   "fragments": [
//!     { "name": "entry", "role": "entry", "source": "entry.cu", "exports": ["ltk_demo"],
//!       "requires": ["ltk_transform", "ltk_combine"] },
//!     { "name": "transform_x{scale}", "source": "transform.cu",
//!       "defines": { "LTK_SCALE": "{scale}.0f" }, "exports": ["ltk_transform"] },
//!     { "name": "combine_{op}", "source": "combine.cu",
//!       "defines": { "LTK_COMBINE": "LTK_COMBINE_{op}" }, "exports": ["ltk_combine"] }
//!   ],
//!   "plans": [
//!     { "name": "demo_{op}_x{scale}", "kernel": "ltk_demo", "entry": "entry",
//!       "fragments": ["transform_x{scale}", "combine_{op}"], "options": ["-O3"] }
//!   ]
//! }
//! ```
//!
//! A `{axis}` in any string of a fragment or plan template expands that template over
//! the axis's values (several axes: their cartesian product). Paths are relative to the
//! spec file. Fragments are compiled for the spec's `target`; one that needs newer
//! instructions (tensor-core forms an older target lacks) names its own, e.g.
//! `"target": "sm_80"`, and every plan that links it must then declare `"min_arch": 80`
//! or more — the spec is refused otherwise — so that providers and warm-ups for older
//! targets skip the plan instead of failing to link it.

#![forbid(unsafe_code)]

mod spec;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ltokit::bundle::{Bundle, FragmentRecord};
use ltokit::digest::{Digest, FieldHasher};
use ltokit::fragment::{self, CompileOptions};
use ltokit::toolkit::nvrtc::Nvrtc;
use ltokit::{Error, Result};

pub use spec::{BundleSpec, ExpandedFragment, FragmentTemplate, PlanTemplate};

/// One fragment's record, its LTO-IR, and whether it was reused.
type Compiled = (FragmentRecord, Arc<[u8]>, bool);

/// What a build did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildReport {
    /// The bundle written.
    pub output: PathBuf,
    /// Fragments compiled now.
    pub compiled: usize,
    /// Fragments reused from the previous bundle.
    pub reused: usize,
    /// Plans in the bundle.
    pub plans: usize,
    /// Size of the bundle file.
    pub bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Every file the bundle depends on (for `cargo:rerun-if-changed`).
    pub inputs: Vec<PathBuf>,
}

/// Prints `cargo:rerun-if-changed` for the spec and every source and header it used, and
/// `cargo:rerun-if-env-changed` for the variables that decide which NVRTC compiles.
pub fn emit_rerun_if_changed(report: &BuildReport) {
    for path in &report.inputs {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for var in ["LTOKIT_CUDA_LIB_DIR", "CUDA_HOME", "CUDA_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
}

/// Where a crate's kernel bundle came from (see [`build_or_prebuilt`]).
#[derive(Debug, Clone)]
pub enum Provenance {
    /// Compiled (or reused fragment by fragment) with NVRTC now: the checked-in bundle
    /// was stale or absent.
    Built(BuildReport),
    /// The checked-in prebuilt bundle, verified fresh against the spec and its sources,
    /// was copied.
    Prebuilt {
        /// The prebuilt bundle used.
        prebuilt: PathBuf,
        /// Why it was used: it matches the sources, or NVRTC could not be loaded.
        why: String,
    },
}

/// For `build.rs`: provides the bundle of `spec_path` in `output`. Where the checked-in
/// `prebuilt` bundle was made from the current spec and sources ([`check_prebuilt`]),
/// it is copied as it is, NVRTC or not: plans are keyed by their fragments' bytes, and
/// NVRTC's bytes also depend on how the include folders are named (a build here and
/// `ltokit bundle build` from the repository root differ by a few bytes), so compiling
/// again would leave every warmed cache and provider built from the checked-in bundle
/// missing the plans of the recompiled fragments. Where it is stale, the bundle is built
/// with NVRTC into `output`, starting from the prebuilt one so that unchanged fragments
/// are reused rather than recompiled; without NVRTC a stale prebuilt bundle is an error.
/// Either way it prints the `cargo:rerun-if-*` lines, and a `cargo:warning` when it
/// found the prebuilt bundle stale or could not compile.
pub fn build_or_prebuilt(
    spec_path: &Path,
    prebuilt: &Path,
    output: &Path,
    jobs: usize,
) -> Result<Provenance> {
    println!("cargo:rerun-if-changed={}", prebuilt.display());
    let copy = || {
        if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::copy(prebuilt, output).map_err(|e| Error::io(output, e))
    };
    let stale = match check_prebuilt(spec_path, prebuilt) {
        Ok(report) => {
            emit_rerun_if_changed(&report);
            copy()?;
            return Ok(Provenance::Prebuilt {
                prebuilt: prebuilt.to_path_buf(),
                why: "it matches the current spec and sources".into(),
            });
        }
        Err(stale) => stale,
    };
    match Nvrtc::get() {
        Ok(_) => {
            if prebuilt.is_file() {
                copy()?;
            }
            let report = build_bundle(spec_path, output, jobs)?;
            emit_rerun_if_changed(&report);
            println!("cargo:warning={stale}");
            Ok(Provenance::Built(report))
        }
        Err(why) => {
            println!(
                "cargo:warning=NVRTC is not available ({why}), so the kernels cannot be compiled"
            );
            // Names what changed since the prebuilt bundle was made.
            Err(stale)
        }
    }
}

/// Checks, without NVRTC, that the bundle at `prebuilt` was built from the spec at
/// `spec_path` as it is now: the same plans, and for every fragment the compile key its
/// current source, headers, defines and options give with the NVRTC version that
/// produced it. An error names the first difference and the command that refreshes it.
pub fn check_prebuilt(spec_path: &Path, prebuilt: &Path) -> Result<BuildReport> {
    let started = Instant::now();
    let stale = |why: String| Error::StalePrebuilt {
        prebuilt: prebuilt.to_path_buf(),
        why,
    };
    let bundle = Bundle::open(prebuilt)?;
    let spec = BundleSpec::from_file(spec_path)?;
    let base = spec_base(spec_path);
    let (fragments, plans) = spec.expand()?;
    let headers = header_files(&include_dirs(&spec, &base))?;
    let mut inputs: Vec<PathBuf> = vec![spec_path.to_path_buf()];
    inputs.extend(headers.iter().map(|(p, _)| p.clone()));
    let records = &bundle.manifest().fragments;
    if records.len() != fragments.len() {
        return Err(stale(format!(
            "it has {} fragments, the spec {}",
            records.len(),
            fragments.len()
        )));
    }
    for (f, record) in fragments.iter().zip(records) {
        let source_path = base.join(&f.source);
        let source =
            std::fs::read_to_string(&source_path).map_err(|e| Error::io(&source_path, e))?;
        if !inputs.contains(&source_path) {
            inputs.push(source_path);
        }
        let key = compile_key(f, &source, &headers, &base, record.producer);
        if record.name != f.name || record.compile_key != key {
            return Err(stale(format!(
                "fragment {} does not match its source, headers or options",
                f.name
            )));
        }
    }
    if bundle.manifest().plans != plans {
        return Err(stale("its plans differ from the spec's".into()));
    }
    Ok(BuildReport {
        output: prebuilt.to_path_buf(),
        compiled: 0,
        reused: fragments.len(),
        plans: plans.len(),
        bytes: std::fs::metadata(prebuilt).map_or(0, |m| m.len()),
        elapsed: started.elapsed(),
        inputs,
    })
}

fn spec_base(spec_path: &Path) -> PathBuf {
    spec_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn include_dirs(spec: &BundleSpec, base: &Path) -> Vec<PathBuf> {
    std::iter::once(base.to_path_buf())
        .chain(spec.include_dirs.iter().map(|d| base.join(d)))
        .collect()
}

/// Builds the bundle described by `spec_path` into `output`, compiling with `jobs`
/// threads (0 = one per core).
pub fn build_bundle(spec_path: &Path, output: &Path, jobs: usize) -> Result<BuildReport> {
    let started = Instant::now();
    let spec = BundleSpec::from_file(spec_path)?;
    let base = spec_base(spec_path);
    let (fragments, plans) = spec.expand()?;
    let nvrtc = Nvrtc::get()?;
    let include_dirs = include_dirs(&spec, &base);
    let headers = header_files(&include_dirs)?;
    let mut inputs: Vec<PathBuf> = vec![spec_path.to_path_buf()];
    inputs.extend(headers.iter().map(|(p, _)| p.clone()));

    // Compile keys, and what the previous bundle can give back.
    let mut jobs_list = Vec::with_capacity(fragments.len());
    for f in &fragments {
        let source_path = base.join(&f.source);
        let source =
            std::fs::read_to_string(&source_path).map_err(|e| Error::io(&source_path, e))?;
        if !inputs.contains(&source_path) {
            inputs.push(source_path.clone());
        }
        let key = compile_key(f, &source, &headers, &base, nvrtc.version());
        jobs_list.push((f, source, key));
    }
    let previous = previous_fragments(output);

    let results: Vec<Compiled> =
        ltokit::parallel::try_map(&jobs_list, jobs, |(f, source, key)| {
            match previous.get(key) {
                Some((record, bytes)) => Ok((record.clone(), Arc::clone(bytes), true)),
                None => compile_one(f, source, *key, &include_dirs).map(|(r, b)| (r, b, false)),
            }
        })?;
    let reused = results.iter().filter(|r| r.2).count();
    let (mut records, payloads): (Vec<FragmentRecord>, Vec<Arc<[u8]>>) =
        results.into_iter().map(|(r, b, _)| (r, b)).unzip();
    // Records carry the names of *this* spec even when reused under another name.
    for (record, (f, _, _)) in records.iter_mut().zip(&jobs_list) {
        record.name = f.name.clone();
        record.role = f.role;
        record.exports = f.exports.clone();
        record.requires = f.requires.clone();
    }
    let refs: Vec<&[u8]> = payloads.iter().map(|p| &p[..]).collect();
    let bytes = Bundle::write(&spec.name, records, plans.clone(), &refs)?;
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = output.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, output).map_err(|e| Error::io(output, e))?;
    Ok(BuildReport {
        output: output.to_path_buf(),
        compiled: jobs_list.len() - reused,
        reused,
        plans: plans.len(),
        bytes: bytes.len() as u64,
        elapsed: started.elapsed(),
        inputs,
    })
}

fn compile_one(
    f: &ExpandedFragment,
    source: &str,
    key: Digest,
    include_dirs: &[PathBuf],
) -> Result<(FragmentRecord, Arc<[u8]>)> {
    let mut opts = CompileOptions::new(f.target);
    opts.include_dirs = include_dirs.to_vec();
    opts.defines = f.defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
    opts.name_expressions = f.name_expressions.clone();
    opts.extra_options = f.options.clone();
    let frag = fragment::compile(source, &f.source, &opts).map_err(|e| match e {
        Error::Compile { name, options, log } => Error::Compile {
            name: format!("{name} (fragment {})", f.name),
            options,
            log,
        },
        other => other,
    })?;
    let mut exports = f.exports.clone();
    exports.extend(
        frag.lowered_names
            .iter()
            .map(|(_, lowered)| lowered.clone()),
    );
    let record = FragmentRecord {
        name: f.name.clone(),
        role: f.role,
        exports,
        requires: f.requires.clone(),
        producer: frag.producer,
        target: frag.target.to_string(),
        content_hash: Digest::of(&frag.ltoir),
        compile_key: key,
        block: 0,
        offset: 0,
        raw_bytes: 0,
    };
    Ok((record, frag.ltoir.into()))
}

/// Everything that determines a fragment's LTO-IR. Header paths are hashed relative to
/// the spec's folder (`base`), so a checkout anywhere gives the same keys.
fn compile_key(
    f: &ExpandedFragment,
    source: &str,
    headers: &[(PathBuf, Digest)],
    base: &Path,
    nvrtc: ltokit::version::Version,
) -> Digest {
    let mut h = FieldHasher::new("ltokit-build compile key v2");
    h.field(source.as_bytes())
        .field(f.source.as_bytes())
        .field(f.target.nvrtc_arch().as_bytes());
    h.field(format!("{nvrtc}").as_bytes());
    for (k, v) in &f.defines {
        h.field(k.as_bytes()).field(v.as_bytes());
    }
    for part in f.name_expressions.iter().chain(&f.options) {
        h.field(part.as_bytes());
    }
    for (path, digest) in headers {
        let relative = path.strip_prefix(base).unwrap_or(path);
        h.field(relative.to_string_lossy().as_bytes())
            .field(digest.as_bytes());
    }
    h.finish()
}

/// `.h`, `.cuh`, `.hpp` files of the include directories (not recursive), with digests.
fn header_files(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, Digest)>> {
    let mut out = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("h" | "cuh" | "hpp")
            ) {
                let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                out.push((path, Digest::of(&bytes)));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The fragments of the bundle already at `output`, by compile key (empty when there is
/// none or it does not open).
fn previous_fragments(output: &Path) -> HashMap<Digest, (FragmentRecord, Arc<[u8]>)> {
    let mut out = HashMap::new();
    let Ok(bundle) = Bundle::open(output) else {
        return out;
    };
    for (i, record) in bundle.manifest().fragments.iter().enumerate() {
        if let Ok(bytes) = bundle.fragment_bytes(i) {
            out.insert(record.compile_key, (record.clone(), bytes));
        }
    }
    out
}
