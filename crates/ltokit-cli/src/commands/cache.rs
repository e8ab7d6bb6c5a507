//! `ltokit cache …`: inspect and maintain the disk cache; and the cache options shared
//! by commands that link.

use std::path::PathBuf;

use anyhow::Context;
use std::process::ExitCode;

use ltokit::cache::{self, CacheConfig, DiskCache};

use indicatif::HumanBytes;

/// Cache options shared by `link`, `warmup` and `bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct CacheArgs {
    /// Disk cache directory (overrides LTOKIT_CACHE_DIR).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Bypass the disk cache.
    #[arg(long)]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The effective configuration: the environment, then these flags.
    pub fn config(&self) -> anyhow::Result<CacheConfig> {
        let mut config = CacheConfig::from_env()?;
        if let Some(dir) = &self.cache_dir {
            config.dir = Some(dir.clone());
        }
        if self.no_cache {
            config.dir = None;
        }
        Ok(config)
    }
}

/// `ltokit cache` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum CacheCommand {
    /// Entries, bytes and the counters persisted by every process that used the cache.
    Stats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List entries, least recently used first.
    Ls {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check every entry; remove bad ones (exit status 1 if any were bad).
    Verify,
    /// Evict least-recently-used entries down to a size.
    Prune {
        /// The size to keep at most (bytes, or with K/M/G).
        #[arg(long, value_name = "N")]
        max_bytes: String,
    },
    /// Remove every entry.
    Clear,
    /// Publish every entry to the fleet's remote cache (e.g. from a warm-up node).
    Push {
        /// Publish to the remote level (LTOKIT_REMOTE), the only destination there is.
        #[arg(long)]
        remote: bool,
    },
    /// Store a cubin made elsewhere (e.g. by nvcc) as the cached result of a bundle's
    /// plan, after checking that it is a cubin for the target with the plan's kernel.
    Import {
        /// The bundle holding the plan.
        #[arg(long)]
        bundle: PathBuf,
        /// The plan's name.
        #[arg(long)]
        plan: String,
        /// The exact target: sm_XY[a|f] or native.
        #[arg(long)]
        arch: String,
        /// The cubin.
        cubin: PathBuf,
    },
}

#[derive(serde::Serialize)]
struct StatsReport {
    dir: PathBuf,
    entries: usize,
    bytes: u64,
    max_bytes: u64,
    /// Links performed by every process that used this cache.
    links: u64,
    /// Disk-cache hits.
    hits: u64,
    /// Corrupt entries found.
    corrupt: u64,
    /// Entries evicted.
    evictions: u64,
    counters: cache::Stats,
    /// Every level's counters, as persisted by the processes that used this cache.
    levels: serde_json::Value,
}

/// The per-level view of persisted counters.
fn levels(c: &cache::Stats, remote: Option<&cache::RemoteConfig>) -> serde_json::Value {
    serde_json::json!({
        "memory": { "note": "per process; see each process's own counters" },
        "providers": { "note": "read-only; hits are counted per process" },
        "disk": {
            "hits": c.l2_hits, "misses": c.l2_misses, "bytes_read": c.bytes_read,
            "bytes_written": c.bytes_written, "evictions": c.evictions, "corrupt": c.corrupt,
        },
        "remote": {
            "configured": remote.map(|r| r.url.clone()),
            "mode": remote.map(|r| format!("{:?}", r.mode).to_lowercase()),
            "hits": c.remote_hits, "misses": c.remote_misses, "refused": c.remote_refused,
            "writes": c.remote_writes,
        },
        "link": { "links": c.links, "link_failures": c.link_failures, "link_nanos": c.link_nanos },
    })
}

fn open(dir: Option<PathBuf>) -> anyhow::Result<DiskCache> {
    let config = CacheConfig::from_env()?;
    let dir = match dir.or(config.dir) {
        Some(d) => d,
        None => anyhow::bail!(
            "the disk cache is off (LTOKIT_CACHE=off); pass --cache-dir DIR to work on one"
        ),
    };
    Ok(cache::open_for_maintenance(&dir, config.max_bytes)?)
}

/// Runs a cache subcommand on `dir` (default: the configured cache).
pub fn run(dir: Option<PathBuf>, command: CacheCommand) -> anyhow::Result<ExitCode> {
    let disk = open(dir)?;
    let config = CacheConfig::from_env()?;
    match command {
        CacheCommand::Stats { json } => {
            let entries = disk.entries();
            let counters = disk.persisted_stats();
            let report = StatsReport {
                dir: disk.root().to_path_buf(),
                entries: entries.len(),
                bytes: entries.iter().map(|e| e.bytes).sum(),
                max_bytes: disk.max_bytes(),
                links: counters.links,
                hits: counters.l2_hits,
                corrupt: counters.corrupt,
                evictions: counters.evictions,
                levels: levels(&counters, config.remote.as_ref()),
                counters,
            };
            if json {
                outln!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                let c = report.counters;
                outln!(
                    "cache {}: {} entries, {} of {}",
                    report.dir.display(),
                    report.entries,
                    HumanBytes(report.bytes),
                    HumanBytes(report.max_bytes)
                );
                outln!(
                    "  hits {}  misses {}  links {} ({:.1} ms total)  link failures {}",
                    c.l2_hits,
                    c.l2_misses,
                    c.links,
                    c.link_nanos as f64 / 1e6,
                    c.link_failures
                );
                outln!(
                    "  read {}  written {}  evictions {}  corrupt {}",
                    HumanBytes(c.bytes_read),
                    HumanBytes(c.bytes_written),
                    c.evictions,
                    c.corrupt
                );
                let remote = config
                    .remote
                    .as_ref()
                    .map_or("not configured".to_string(), |r| {
                        format!("{} ({:?})", r.url, r.mode).to_lowercase()
                    });
                outln!(
                    "  remote {remote}: hits {}  misses {}  refused {}  writes {}",
                    c.remote_hits,
                    c.remote_misses,
                    c.remote_refused,
                    c.remote_writes
                );
            }
        }
        CacheCommand::Push { remote } => {
            anyhow::ensure!(
                remote,
                "say where to push: --remote (the fleet's remote cache)"
            );
            let (pushed, failed) = push(&disk, &config, None)?;
            outln!(
                "pushed {pushed} entries of {} to the remote cache{}",
                disk.root().display(),
                if failed > 0 {
                    format!(", {failed} failed (see the warnings)")
                } else {
                    String::new()
                }
            );
            if failed > 0 {
                return Ok(ExitCode::FAILURE);
            }
        }
        CacheCommand::Ls { json } => {
            let entries = disk.entries();
            if json {
                outln!("{}", serde_json::to_string_pretty(&entries)?);
            } else {
                for e in &entries {
                    outln!("{}  {:>10}  last used {}", e.key, e.bytes, e.last_used);
                }
                outln!("{} entries", entries.len());
            }
        }
        CacheCommand::Verify => {
            let report = disk.verify_all();
            for (key, why) in &report.removed {
                outln!("removed {key}: {why}");
            }
            outln!(
                "{} good, {} removed, {} stale temporary files removed",
                report.good,
                report.removed.len(),
                report.temp_removed
            );
            if !report.removed.is_empty() {
                disk.record(cache::Stats {
                    corrupt: report.removed.len() as u64,
                    ..Default::default()
                });
                return Ok(ExitCode::FAILURE);
            }
        }
        CacheCommand::Prune { max_bytes } => {
            let limit = cache::parse_bytes(&max_bytes).ok_or_else(|| {
                anyhow::anyhow!(
                    "--max-bytes {max_bytes:?} is not a size (bytes, or a number with K, M or G)"
                )
            })?;
            let evicted = disk.evict_to(limit, None);
            disk.record(cache::Stats {
                evictions: evicted,
                ..Default::default()
            });
            let left: u64 = disk.entries().iter().map(|e| e.bytes).sum();
            outln!("evicted {evicted} entries; {} left", HumanBytes(left));
        }
        CacheCommand::Import {
            bundle,
            plan,
            arch,
            cubin,
        } => {
            let target = super::parse_target(&arch)?;
            let plan = ltokit::bundle::Bundle::open(&bundle)?.plan(&plan, target)?;
            let bytes =
                std::fs::read(&cubin).with_context(|| format!("reading {}", cubin.display()))?;
            let info = ltokit::formats::cubin::CubinInfo::parse(&bytes)?;
            anyhow::ensure!(
                info.arch == target.number(),
                "{} is a cubin for sm_{}, not {target}",
                cubin.display(),
                info.arch
            );
            anyhow::ensure!(
                info.kernels.iter().any(|k| k == plan.kernel()),
                "{} has no kernel {} (it has: {})",
                cubin.display(),
                plan.kernel(),
                info.kernels.join(", ")
            );
            let linker = ltokit::cache::NvJitLinkLinker::new(Some(disk.root().join("linkers")));
            let key = plan.key(ltokit::cache::PlanLinker::version(&linker)?);
            disk.put(&key, Some(plan.target()), &bytes)?;
            outln!(
                "stored {} as plan {} for {target} (key {})",
                cubin.display(),
                plan.name(),
                key.0.short(16)
            );
        }
        CacheCommand::Clear => {
            let n = disk.clear()?;
            outln!("removed {n} entries");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Publishes the disk cache's entries (for `target` only, when given) to the configured
/// remote level; returns how many were stored and how many failed.
pub fn push(
    disk: &DiskCache,
    config: &CacheConfig,
    target: Option<ltokit::Target>,
) -> anyhow::Result<(usize, usize)> {
    let remote = super::remote::writable(config)?;
    let level = super::remote::level(&remote);
    let (mut pushed, mut failed) = (0, 0);
    disk.for_each_cubin(target, |key, entry_target, cubin| {
        if level.publish(&key, entry_target, &cubin) {
            pushed += 1;
        } else {
            failed += 1;
        }
    });
    Ok((pushed, failed))
}
