//! `ltokit provider …`, `ltokit check` and `ltokit size-report`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ltokit::bundle::Bundle;
use ltokit::cache::{CacheConfig, NvJitLinkLinker, PlanLinker};
use ltokit::formats::audit::{self, Policy};
use ltokit::formats::fatbin::{Codec, EntryKind, FatbinWriter};
use ltokit::launch::{self, Gpu};
use ltokit::provider::{self, build, usable_on, Provider};
use ltokit::Target;

use indicatif::HumanBytes;

use super::{parse_target, write_file};

/// `ltokit provider` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum ProviderCommand {
    /// Build a provider: link a bundle's plans for one target, or promote a cache's entries.
    Build {
        /// The bundle (not with --from-cache).
        #[arg(long, conflicts_with = "from_cache")]
        bundle: Option<PathBuf>,
        /// Promote the disk cache's entries for the target instead.
        #[arg(long)]
        from_cache: bool,
        /// Cache directory for --from-cache (default: the configured one).
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// The exact target: sm_90, sm_90a, sm_100f, … or native.
        #[arg(long)]
        target: String,
        /// `all`, or a file with one plan name per line.
        #[arg(long, default_value = "all")]
        plans: String,
        /// Parallel links (0 = one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Where to write the provider.
        #[arg(short = 'o')]
        output: PathBuf,
    },
    /// Print a provider's manifest summary.
    Inspect {
        /// The provider.
        provider: PathBuf,
        /// Print the manifest as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check every digest, and that it carries only cubins for its own target.
    Verify {
        /// The provider.
        provider: PathBuf,
    },
    /// Copy providers into the default directory.
    Install {
        /// Keep every provider given.
        #[arg(long, conflicts_with = "minimal")]
        all: bool,
        /// Keep only those the local GPUs (or the --target values) can use.
        #[arg(long)]
        minimal: bool,
        /// Targets to install for with --minimal (instead of the local GPUs).
        #[arg(long)]
        target: Vec<String>,
        /// Provider files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the providers found and which local GPU each serves.
    List,
    /// Serve one entry as a fresh process would — open the file, decompress and verify
    /// the entry — and print how long each step took (JSON).
    Read {
        /// The provider.
        provider: PathBuf,
        /// The entry's plan name (default: the entry read last in the largest block,
        /// the slowest to serve).
        #[arg(long)]
        plan: Option<String>,
        /// Where to write the cubin.
        #[arg(short = 'o')]
        output: Option<PathBuf>,
    },
}

/// What `ltokit provider read` measured.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct ReadTiming {
    /// Plan name of the entry read, when known.
    pub plan: Option<String>,
    /// Size of the cubin.
    pub raw_bytes: u64,
    /// Raw size of the block it was decompressed from.
    pub block_raw_bytes: u64,
    /// Reading the file and checking its header and manifest, in milliseconds.
    pub open_ms: f64,
    /// Decompressing and verifying the entry, in milliseconds.
    pub entry_ms: f64,
}

fn read_entry(
    path: &Path,
    plan: Option<&str>,
    output: Option<&Path>,
) -> anyhow::Result<ReadTiming> {
    let started = std::time::Instant::now();
    let p = Provider::open(path)?;
    let opened = started.elapsed();
    let m = p.manifest();
    let index = match plan {
        Some(name) => m
            .entries
            .iter()
            .position(|e| e.plan.as_deref() == Some(name))
            .with_context(|| format!("{} has no entry for plan {name}", path.display()))?,
        None => {
            let largest = (0..m.blocks.len())
                .max_by_key(|&b| m.blocks[b].raw_bytes)
                .context("the provider has no entries")?;
            m.entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.slot.block as usize == largest)
                .max_by_key(|(_, e)| e.slot.offset)
                .map(|(i, _)| i)
                .context("the provider has no entries")?
        }
    };
    let before_entry = std::time::Instant::now();
    let cubin = p.entry_bytes(index)?;
    let entry_time = before_entry.elapsed();
    if let Some(out) = output {
        write_file(out, &cubin)?;
    }
    let e = &m.entries[index];
    Ok(ReadTiming {
        plan: e.plan.clone(),
        raw_bytes: cubin.len() as u64,
        block_raw_bytes: m.blocks[e.slot.block as usize].raw_bytes,
        open_ms: opened.as_secs_f64() * 1e3,
        entry_ms: entry_time.as_secs_f64() * 1e3,
    })
}

/// Runs a provider subcommand.
pub fn run(command: ProviderCommand) -> anyhow::Result<ExitCode> {
    match command {
        ProviderCommand::Build {
            bundle,
            from_cache,
            cache_dir,
            target,
            plans,
            jobs,
            output,
        } => {
            let target = parse_target(&target)?;
            let (bytes, summary) = if from_cache {
                let config = CacheConfig::from_env()?;
                let dir = cache_dir
                    .or(config.dir)
                    .context("the disk cache is off; pass --cache-dir")?;
                let disk = ltokit::cache::open_for_maintenance(&dir, config.max_bytes)?;
                let linker = NvJitLinkLinker::new(Some(disk.root().join("linkers"))).version()?;
                ltokit::cache::promote::to_provider(&disk, target, linker, "promoted-cache")?
            } else {
                let bundle = Bundle::open(&bundle.context("pass --bundle B (or --from-cache)")?)?;
                let names: Option<Vec<String>> = if plans == "all" {
                    None
                } else {
                    Some(super::read_plan_list(Path::new(&plans))?)
                };
                let total = names
                    .as_ref()
                    .map_or(bundle.manifest().plans.len(), Vec::len);
                let bar = ProgressBar::new(total as u64);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                let out = build::from_bundle(&bundle, target, names.as_deref(), jobs, &|name| {
                    bar.inc(1);
                    bar.set_message(name.to_string());
                })?;
                bar.finish_and_clear();
                out
            };
            write_file(&output, &bytes)?;
            outln!(
                "{}: {} cubins for {target}, {}",
                output.display(),
                summary.entries,
                HumanBytes(summary.bytes)
            );
            for s in &summary.skipped {
                outln!("  skipped {}: {}", s.plan, s.why);
            }
        }
        ProviderCommand::Inspect { provider, json } => {
            let p = Provider::open(&provider)?;
            let m = p.manifest();
            if json {
                outln!("{}", serde_json::to_string_pretty(m)?);
            } else {
                outln!(
                    "provider {} for {}: {} cubins ({} raw, {} stored in {} blocks, format {}), nvJitLink {}, {} plans skipped",
                    m.name,
                    m.target,
                    m.entries.len(),
                    HumanBytes(m.raw_bytes()),
                    HumanBytes(m.stored_bytes()),
                    m.blocks.len(),
                    p.format(),
                    m.linker,
                    m.skipped.len()
                );
            }
        }
        ProviderCommand::Verify { provider } => {
            let p = Provider::open(&provider)?;
            p.verify()?;
            let policy = Policy {
                targets: vec![p.target()],
                kinds: vec![EntryKind::Cubin],
                max_bytes: None,
            };
            let findings = audit::check_file(&provider, &policy)?;
            if !findings.is_empty() {
                print_findings(&findings)?;
                return Ok(ExitCode::FAILURE);
            }
            outln!(
                "{}: {} entries, digests good, only {} cubins",
                provider.display(),
                p.manifest().entries.len(),
                p.target()
            );
        }
        ProviderCommand::Install {
            all,
            minimal,
            target,
            files,
        } => return install(all, minimal, &target, &files),
        ProviderCommand::Read {
            provider,
            plan,
            output,
        } => {
            let timing = read_entry(&provider, plan.as_deref(), output.as_deref())?;
            outln!("{}", serde_json::to_string(&timing)?);
        }
        ProviderCommand::List => {
            let gpus = local_gpus();
            let found = provider::discover(&provider::search_path());
            if found.is_empty() {
                outln!(
                    "no providers found (searched LTOKIT_PROVIDER_PATH and {})",
                    provider::default_dir().display()
                );
            }
            for p in &found {
                let serves: Vec<String> = gpus
                    .iter()
                    .filter(|(_, cc)| usable_on(&p.target(), *cc, false))
                    .map(|(name, cc)| format!("{name} ({cc})"))
                    .collect();
                outln!(
                    "{}  {}  {} cubins  serves: {}",
                    p.path().display(),
                    p.target(),
                    p.manifest().entries.len(),
                    if serves.is_empty() {
                        "no local GPU".to_string()
                    } else {
                        serves.join(", ")
                    }
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn local_gpus() -> Vec<(String, ltokit::ComputeCapability)> {
    if !launch::driver_available() {
        return Vec::new();
    }
    let n = Gpu::count().unwrap_or(0);
    (0..n)
        .filter_map(|i| Gpu::open(i).ok())
        .map(|g| (g.name().to_string(), g.compute_capability()))
        .collect()
}

fn install(
    all: bool,
    minimal: bool,
    targets: &[String],
    files: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(all || minimal, "say --all (keep every provider given) or --minimal (only those this machine's GPUs or the --target values can use)");
    let wanted: Vec<ltokit::ComputeCapability> = if targets.is_empty() {
        local_gpus().into_iter().map(|(_, cc)| cc).collect()
    } else {
        targets
            .iter()
            .map(|t| parse_target(t).map(|t| t.cc))
            .collect::<anyhow::Result<_>>()?
    };
    if minimal && wanted.is_empty() {
        outln!("--minimal with no GPU here and no --target: nothing is installed (there is no implicit fallback target)");
        return Ok(ExitCode::SUCCESS);
    }
    let dir = provider::default_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for f in files {
        let p = Provider::open(f)?;
        p.verify()?;
        if minimal && !wanted.iter().any(|cc| usable_on(&p.target(), *cc, false)) {
            outln!(
                "skipped {} ({}): no wanted GPU can use it",
                f.display(),
                p.target()
            );
            continue;
        }
        let name = f.file_name().context("provider path has no file name")?;
        let dest = dir.join(name);
        std::fs::copy(f, &dest).with_context(|| format!("copying to {}", dest.display()))?;
        outln!(
            "installed {} ({}) → {}",
            f.display(),
            p.target(),
            dest.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_findings(findings: &[audit::Finding]) -> std::io::Result<()> {
    outln!("{:<40} {:>6}  {:<16} why", "file", "entry", "what");
    for f in findings {
        outln!(
            "{:<40} {:>6}  {:<16} {}",
            f.file,
            f.entry.map_or("-".to_string(), |e| e.to_string()),
            f.what,
            f.why
        );
    }
    Ok(())
}

/// `ltokit check`: the binary audit.
pub fn check(
    targets: &str,
    kinds: &str,
    max_bytes: Option<String>,
    files: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let targets = targets
        .split(',')
        .map(|t| t.trim().parse::<Target>())
        .collect::<Result<Vec<_>, _>>()?;
    let kinds = kinds
        .split(',')
        .map(|k| match k.trim() {
            "cubin" => Ok(EntryKind::Cubin),
            "ptx" => Ok(EntryKind::Ptx),
            "ltoir" => Ok(EntryKind::LtoIr),
            other => Err(anyhow::anyhow!(
                "unknown kind {other:?}; use cubin, ptx or ltoir"
            )),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let max_bytes = max_bytes
        .map(|m| {
            ltokit::cache::parse_bytes(&m)
                .ok_or_else(|| anyhow::anyhow!("--max-bytes {m:?} is not a size"))
        })
        .transpose()?;
    let policy = Policy {
        targets,
        kinds,
        max_bytes,
    };
    let mut all = Vec::new();
    for f in files {
        let findings = audit::check_file(f, &policy)?;
        outln!(
            "{}: {}",
            f.display(),
            if findings.is_empty() {
                "ok".to_string()
            } else {
                format!("{} findings", findings.len())
            }
        );
        all.extend(findings);
    }
    if all.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    print_findings(&all)?;
    Ok(ExitCode::FAILURE)
}

#[derive(serde::Serialize)]
struct ArchSize {
    target: String,
    cubins: usize,
    cubin_bytes: u64,
    /// Format 2: solid blocks and a compressed manifest.
    provider_bytes: u64,
    blocks: usize,
    /// Format 1's payload: one zstd frame per cubin (its manifest not counted).
    provider_per_entry_frames_bytes: u64,
    /// Serving the slowest entry in a fresh process (median of 5): open, then entry.
    first_entry_open_ms: f64,
    first_entry_read_ms: f64,
}

/// Times `ltokit provider read` on `path` in `runs` fresh processes; medians of the
/// open and entry times.
fn time_first_entry(path: &Path, runs: usize) -> anyhow::Result<(f64, f64)> {
    let exe = std::env::current_exe().context("finding the ltokit executable")?;
    let mut open = Vec::new();
    let mut entry = Vec::new();
    for _ in 0..runs {
        let out = std::process::Command::new(&exe)
            .arg("provider")
            .arg("read")
            .arg(path)
            .output()
            .context("running `ltokit provider read`")?;
        anyhow::ensure!(
            out.status.success(),
            "`ltokit provider read {}` failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let t: ReadTiming = serde_json::from_slice(&out.stdout)?;
        open.push(t.open_ms);
        entry.push(t.entry_ms);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut open), median(&mut entry)))
}

/// The payload size of `items` compressed one zstd frame each (format 1's layout), at
/// the level ltokit's blocks use.
fn per_item_frames(items: &[&[u8]], jobs: usize) -> anyhow::Result<u64> {
    let sizes = ltokit::parallel::try_map(items, jobs, |raw| {
        ltokit::formats::blocks::compress("one item of the size report", raw)
            .map(|frame| frame.len() as u64)
    })?;
    Ok(sizes.iter().sum())
}

/// `ltokit size-report`: the bundle, the same plans linked ahead of time for a list of
/// architectures (one fatbin, raw and zstd), and one provider per architecture — each
/// format beside the one before it, and the time to serve a provider's first entry.
pub fn size_report(
    bundle_path: &Path,
    archs: &str,
    jobs: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let bundle = Bundle::open(bundle_path)?;
    let m = bundle.manifest();
    let bundle_file = std::fs::metadata(bundle_path)?.len();
    let fragments: Vec<std::sync::Arc<[u8]>> = (0..m.fragments.len())
        .map(|i| bundle.fragment_bytes(i))
        .collect::<Result<_, _>>()?;
    let fragment_refs: Vec<&[u8]> = fragments.iter().map(|f| &f[..]).collect();
    // Format 1: a pretty JSON manifest naming every fragment, one frame per fragment.
    let bundle_v1 =
        64 + serde_json::to_vec_pretty(m)?.len() as u64 + per_item_frames(&fragment_refs, jobs)?;
    let targets = archs
        .split(',')
        .map(|t| t.trim().parse::<Target>())
        .collect::<Result<Vec<_>, _>>()?;
    let scratch = std::env::temp_dir().join(format!("ltokit-size-report-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut raw_fatbin = FatbinWriter::new();
    let mut zstd_fatbin = FatbinWriter::new();
    let mut per_arch = Vec::new();
    for target in &targets {
        let started = std::time::Instant::now();
        let linked = build::link_all(&bundle, *target, None, jobs, &|_| {})?;
        let cubin_bytes: u64 = linked.entries.iter().map(|e| e.cubin.len() as u64).sum();
        for e in &linked.entries {
            raw_fatbin.add(EntryKind::Cubin, *target, &e.cubin, Codec::None)?;
            zstd_fatbin.add(EntryKind::Cubin, *target, &e.cubin, Codec::Zstd)?;
        }
        let cubins: Vec<&[u8]> = linked.entries.iter().map(|e| &e.cubin[..]).collect();
        let frames = per_item_frames(&cubins, jobs)?;
        let n = linked.entries.len();
        let (provider_bytes, _) = build::from_linked(&bundle, *target, linked)?;
        let file = scratch.join(format!("{target}.ltkp"));
        write_file(&file, &provider_bytes)?;
        let blocks = Provider::open(&file)?.manifest().blocks.len();
        let (open_ms, read_ms) = time_first_entry(&file, 5)?;
        eprintln!(
            "{target}: {n} cubins linked and packed in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        per_arch.push(ArchSize {
            target: target.to_string(),
            cubins: n,
            cubin_bytes,
            provider_bytes: provider_bytes.len() as u64,
            blocks,
            provider_per_entry_frames_bytes: frames,
            first_entry_open_ms: open_ms,
            first_entry_read_ms: read_ms,
        });
    }
    // Best effort: the scratch files are the report's own.
    let _ = std::fs::remove_dir_all(&scratch);
    let fat_raw = raw_fatbin.finish().len() as u64;
    let fat_zstd = zstd_fatbin.finish().len() as u64;
    if json {
        let v = serde_json::json!({
            "bundle": bundle_path.display().to_string(), "fragments": m.fragments.len(), "plans": m.plans.len(),
            "ltoir_raw_bytes": m.raw_bytes(), "ltoir_stored_bytes": m.stored_bytes(),
            "bundle_file_bytes": bundle_file, "bundle_format1_bytes": bundle_v1,
            "aot_fatbin_raw_bytes": fat_raw, "aot_fatbin_zstd_bytes": fat_zstd, "per_arch": per_arch,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "bundle {}: {} fragments, {} plans: LTO-IR {} raw, {} in solid blocks; file {} (format 1 would be {})",
            m.name,
            m.fragments.len(),
            m.plans.len(),
            HumanBytes(m.raw_bytes()),
            HumanBytes(m.stored_bytes()),
            HumanBytes(bundle_file),
            HumanBytes(bundle_v1)
        );
        outln!(
            "ahead of time for {}: one fatbin {} raw, {} zstd",
            archs,
            HumanBytes(fat_raw),
            HumanBytes(fat_zstd)
        );
        for a in &per_arch {
            outln!(
                "  {:<8} {:>5} cubins {:>10} raw   provider {:>10} in {} blocks (per-entry frames {:>10})   first entry {:.2} ms open + {:.2} ms read",
                a.target,
                a.cubins,
                HumanBytes(a.cubin_bytes),
                HumanBytes(a.provider_bytes),
                a.blocks,
                HumanBytes(a.provider_per_entry_frames_bytes),
                a.first_entry_open_ms,
                a.first_entry_read_ms
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
