//! The kernel cache: plan → kernel, through in-process memory (L1) and a chain of levels
//! — prebuilt providers, the disk (L2), a fleet-shared remote store — then nvJitLink.
//!
//! ```text
//! get(plan) ─► L1 hit? ──────────────────────────────────────────────► kernel
//!                │ miss (single flight per key: one thread computes, the others wait)
//!                ▼
//!              resolve once: the key under this nvJitLink
//!                ▼
//!              each level in order: providers → disk → remote
//!                │ hit: back-fill the faster levels ────────► load ─► L1 ─► kernel
//!                │ all miss; strict mode (LTOKIT_JIT=off) stops here with an error
//!                ▼
//!              each level's single flight: the disk's lock file (this node), the
//!              remote lock (the fleet); an entry that appears meanwhile is taken
//!                ▼
//!              link, store in every writable level, release ─► load ─► L1 ─► kernel
//! ```
//!
//! No lock is held while linking except the per-key ones: hits and other keys proceed.
//! A full or read-only disk degrades to memory only, with one warning; a remote store
//! that fails is skipped for a back-off period, so it never fails a request that a local
//! link can serve. Each level is one file: `providers`, `disk_level` (over `disk`),
//! `remote` (feature `remote`), behind the trait in `level`.
//!
//! The cache is generic over what a "loaded kernel" is ([`Loader`]): the raw cubin for
//! tools and tests ([`CubinLoader`]), a GPU module for launches
//! (`launch::ModuleLoader`, feature `gpu`). Linking is behind [`PlanLinker`] so that tests can
//! count and slow links.

pub mod disk;
pub mod disk_level;
pub mod level;
pub(crate) mod memory;
pub mod promote;
pub mod providers;
#[cfg(feature = "remote")]
pub mod remote;
pub mod remote_config;
pub mod stats;
pub mod warmup;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

pub use disk::DiskCache;
use level::{CacheLevel, Flight, Recorder, Request};
use memory::{MemoryCache, Served};
pub use remote_config::{RemoteConfig, RemoteMode};
pub use stats::Stats;

use crate::digest::{Digest, FieldHasher};
use crate::error::{Error, Result};
use crate::plan::{Plan, PlanKey};
use crate::provider::Provider;
use crate::toolkit::nvjitlink::NvJitLink;
use crate::version::Version;

/// Default size bound of the disk cache: 1 GiB. A full IVF-Flat variant space for one
/// architecture is tens of MB of cubins; 1 GiB holds that for several architectures and
/// toolchain versions at once while staying a small fraction of any disk, and it matches
/// the CUDA driver's own JIT cache default.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Cache settings; [`CacheConfig::from_env`] reads the `LTOKIT_*` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// The disk cache directory; `None` disables L2 (`LTOKIT_CACHE=off`).
    pub dir: Option<PathBuf>,
    /// Size bound of the disk cache (`LTOKIT_CACHE_MAX_BYTES`).
    pub max_bytes: u64,
    /// Whether linking is allowed (`LTOKIT_JIT=off` makes this false: strict mode).
    pub jit: bool,
    /// Where providers are looked for (`LTOKIT_PROVIDER_PATH`, then the default directory).
    pub providers: Vec<PathBuf>,
    /// Let a plain `sm_XY` provider serve a device of the same major and a newer minor
    /// (`LTOKIT_PROVIDER_POLICY=minor`; default exact).
    pub allow_newer_minor: bool,
    /// The fleet-shared level (`LTOKIT_REMOTE=redis://HOST:PORT/DB`), if any.
    pub remote: Option<RemoteConfig>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            dir: None,
            max_bytes: DEFAULT_MAX_BYTES,
            jit: true,
            providers: Vec::new(),
            allow_newer_minor: false,
            remote: None,
        }
    }
}

impl CacheConfig {
    /// Settings from the environment: `LTOKIT_CACHE_DIR` (default `$XDG_CACHE_HOME/ltokit`,
    /// else `~/.cache/ltokit`), `LTOKIT_CACHE_MAX_BYTES` (bytes, or with a K/M/G suffix),
    /// `LTOKIT_CACHE=off`, `LTOKIT_JIT=off`.
    pub fn from_env() -> Result<Self> {
        let off = |var: &str| {
            std::env::var(var).is_ok_and(|v| {
                matches!(
                    v.to_ascii_lowercase().as_str(),
                    "off" | "0" | "false" | "no"
                )
            })
        };
        let dir = if off("LTOKIT_CACHE") {
            None
        } else {
            Some(default_dir())
        };
        let max_bytes = match std::env::var("LTOKIT_CACHE_MAX_BYTES") {
            Ok(v) => parse_bytes(&v).ok_or_else(|| Error::BadEnvironment {
                variable: "LTOKIT_CACHE_MAX_BYTES",
                value: v.clone(),
                why: "not a size; use bytes, or a number with K, M or G (e.g. 512M)".into(),
            })?,
            Err(_) => DEFAULT_MAX_BYTES,
        };
        let allow_newer_minor = match std::env::var("LTOKIT_PROVIDER_POLICY").as_deref() {
            Err(_) | Ok("exact") => false,
            Ok("minor") => true,
            Ok(other) => {
                return Err(Error::BadEnvironment {
                    variable: "LTOKIT_PROVIDER_POLICY",
                    value: other.to_string(),
                    why: "use exact (the default) or minor".into(),
                })
            }
        };
        Ok(CacheConfig {
            dir,
            max_bytes,
            jit: !off("LTOKIT_JIT"),
            providers: crate::provider::search_path(),
            allow_newer_minor,
            remote: RemoteConfig::from_env()?,
        })
    }

    /// Explicit settings only, the environment ignored: the disk cache in `dir`, the
    /// default size bound, linking allowed, no providers. For the environment's settings
    /// with another directory, use `CacheConfig::from_env()?.with_dir(Some(dir))`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        CacheConfig {
            dir: Some(dir.into()),
            ..CacheConfig::default()
        }
    }

    /// The same settings with the disk cache in `dir` (`None`: no disk cache).
    pub fn with_dir(self, dir: Option<PathBuf>) -> Self {
        CacheConfig { dir, ..self }
    }

    /// The same settings with linking allowed or not (strict mode).
    pub fn with_jit(self, jit: bool) -> Self {
        CacheConfig { jit, ..self }
    }

    /// The same settings with another disk-cache size bound.
    pub fn with_max_bytes(self, max_bytes: u64) -> Self {
        CacheConfig { max_bytes, ..self }
    }

    /// The same settings with these provider files or directories, searched in order.
    pub fn with_providers(self, providers: Vec<PathBuf>) -> Self {
        CacheConfig { providers, ..self }
    }

    /// The same settings with this remote level (`None`: none).
    pub fn with_remote(self, remote: Option<RemoteConfig>) -> Self {
        CacheConfig { remote, ..self }
    }

    /// The same settings with the provider policy for newer minors
    /// (`LTOKIT_PROVIDER_POLICY=minor` when true).
    pub fn with_newer_minor_providers(self, allow_newer_minor: bool) -> Self {
        CacheConfig {
            allow_newer_minor,
            ..self
        }
    }
}

fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LTOKIT_CACHE_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("ltokit");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache").join("ltokit")
}

/// Parses `1048576`, `64K`, `512M`, `2G` (binary units).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.chars().last()?.to_ascii_uppercase() {
        'K' => (&t[..t.len() - 1], 10),
        'M' => (&t[..t.len() - 1], 20),
        'G' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(1u64 << shift)
}

/// Links plans; the cache calls it on a miss.
pub trait PlanLinker: Send + Sync {
    /// The linker's version, part of every key.
    fn version(&self) -> Result<Version>;
    /// Links a plan into a cubin.
    fn link(&self, plan: &Plan) -> Result<Vec<u8>>;
}

/// Turns a cubin into what L1 holds.
pub trait Loader: Send + Sync {
    /// The loaded form.
    type Item: Clone + Send + Sync;
    /// Loads `cubin`, linked for `plan`.
    fn load(&self, plan: &Plan, cubin: Arc<[u8]>) -> Result<Self::Item>;
}

/// Keeps the cubin bytes themselves (no GPU needed).
#[derive(Debug, Clone, Copy, Default)]
pub struct CubinLoader;

impl Loader for CubinLoader {
    type Item = Arc<[u8]>;
    fn load(&self, _plan: &Plan, cubin: Arc<[u8]>) -> Result<Arc<[u8]>> {
        Ok(cubin)
    }
}

/// Links with nvJitLink. Its version is read without loading the library when a cache
/// directory remembers it for this exact library file, so that a process served from
/// the disk cache never loads nvJitLink at all.
#[derive(Debug, Default)]
pub struct NvJitLinkLinker {
    version: OnceLock<Version>,
    memo_dir: Option<PathBuf>,
}

impl NvJitLinkLinker {
    /// A linker that memoises its version under `memo_dir` (usually the cache's).
    pub fn new(memo_dir: Option<PathBuf>) -> Self {
        NvJitLinkLinker {
            version: OnceLock::new(),
            memo_dir,
        }
    }

    /// Identity of the nvJitLink file the search order would load: its canonical path,
    /// size and modification time. `None` when it would come from the system loader.
    fn identity() -> Option<Digest> {
        let path = crate::toolkit::locate(&crate::toolkit::nvjitlink::SPEC)?;
        let real = std::fs::canonicalize(&path).ok()?;
        let meta = std::fs::metadata(&real).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let mut h = FieldHasher::new("ltokit nvJitLink identity");
        h.field(real.to_string_lossy().as_bytes())
            .field(&meta.len().to_le_bytes())
            .field(&mtime.as_nanos().to_le_bytes());
        Some(h.finish())
    }

    fn memo_path(&self, identity: &Digest) -> Option<PathBuf> {
        self.memo_dir.as_ref().map(|d| d.join(identity.to_string()))
    }
}

impl PlanLinker for NvJitLinkLinker {
    fn version(&self) -> Result<Version> {
        if let Some(v) = self.version.get() {
            return Ok(*v);
        }
        let identity = Self::identity();
        if let Some(path) = identity.as_ref().and_then(|i| self.memo_path(i)) {
            if let Some(v) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| parse_version(&t))
            {
                return Ok(*self.version.get_or_init(|| v));
            }
        }
        let v = NvJitLink::get()?.version();
        if let Some(path) = identity.as_ref().and_then(|i| self.memo_path(i)) {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, format!("{}.{}\n", v.major, v.minor)).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
        Ok(*self.version.get_or_init(|| v))
    }

    fn link(&self, plan: &Plan) -> Result<Vec<u8>> {
        Ok(plan.link()?.cubin)
    }
}

fn parse_version(text: &str) -> Option<Version> {
    let (major, minor) = text.trim().split_once('.')?;
    Some(Version::new(major.parse().ok()?, minor.parse().ok()?))
}

/// Where a request was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// In-process memory.
    L1,
    /// A prebuilt provider.
    Provider,
    /// The disk cache.
    L2,
    /// The fleet-shared remote level.
    Remote,
    /// A fresh link.
    Link,
}

/// A plan with its in-process key computed once: requests through
/// [`KernelCache::get_handle`] skip the hashing that [`KernelCache::get`] does per call.
#[derive(Debug, Clone)]
pub struct PlanHandle {
    plan: Plan,
    memory_key: PlanKey,
}

impl PlanHandle {
    /// Resolves `plan` once.
    pub fn new(plan: Plan) -> Self {
        let memory_key = plan.memory_key();
        PlanHandle { plan, memory_key }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
}

/// The kernel cache. One per device/context (L1 holds loaded kernels).
pub struct KernelCache<L: Loader = CubinLoader> {
    config: CacheConfig,
    l1: MemoryCache<L::Item>,
    disk: Option<Arc<DiskCache>>,
    levels: Vec<Box<dyn CacheLevel>>,
    linker: Arc<dyn PlanLinker>,
    loader: L,
    recorder: Arc<Recorder>,
    providers: Vec<Arc<Provider>>,
}

impl KernelCache<CubinLoader> {
    /// A cache of cubins with nvJitLink as linker.
    pub fn new(config: CacheConfig) -> Self {
        KernelCache::with_loader(config, CubinLoader)
    }
}

impl<L: Loader> KernelCache<L> {
    /// A cache with nvJitLink as linker and `loader` for L1.
    pub fn with_loader(config: CacheConfig, loader: L) -> Self {
        let mut cache = Self::with_linker(config, loader, Arc::new(NvJitLinkLinker::new(None)));
        // nvJitLink's version is remembered inside the disk cache, when there is one.
        let memo = cache.disk.as_ref().map(|d| d.root().join("linkers"));
        cache.linker = Arc::new(NvJitLinkLinker::new(memo));
        cache
    }

    /// A cache with a custom linker (tests, other link back-ends).
    pub fn with_linker(config: CacheConfig, loader: L, linker: Arc<dyn PlanLinker>) -> Self {
        let disk = open_l2(&config).map(Arc::new);
        let recorder = Arc::new(Recorder::new(disk.clone()));
        let providers = crate::provider::discover(&config.providers);
        let mut levels: Vec<Box<dyn CacheLevel>> = vec![Box::new(providers::ProvidersLevel::new(
            providers.clone(),
            config.allow_newer_minor,
            Arc::clone(&recorder),
        ))];
        if let Some(d) = &disk {
            levels.push(Box::new(disk_level::DiskLevel::new(
                Arc::clone(d),
                Arc::clone(&recorder),
            )));
        }
        #[cfg(feature = "remote")]
        if let Some(remote) = &config.remote {
            levels.push(Box::new(remote::RemoteLevel::new(
                remote.clone(),
                Arc::clone(&recorder),
            )));
        }
        KernelCache {
            config,
            l1: MemoryCache::default(),
            disk,
            levels,
            linker,
            loader,
            recorder,
            providers,
        }
    }

    /// The providers found (for every target; each request uses those that serve its
    /// target's compute capability).
    pub fn providers(&self) -> &[Arc<Provider>] {
        &self.providers
    }

    /// The settings in force.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// The disk cache, when enabled and trusted.
    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_deref()
    }

    /// The names of the levels below L1, in the order they are asked.
    pub fn level_names(&self) -> Vec<&'static str> {
        self.levels.iter().map(|l| l.name()).collect()
    }

    /// This process's counters.
    pub fn stats(&self) -> Stats {
        self.recorder.snapshot()
    }

    /// The key of `plan` under this cache's linker.
    pub fn key(&self, plan: &Plan) -> Result<PlanKey> {
        Ok(plan.key(self.linker.version()?))
    }

    /// The loaded kernel for `plan`.
    pub fn get(&self, plan: &Plan) -> Result<L::Item> {
        self.get_traced(plan).map(|(item, _)| item)
    }

    /// The loaded kernel for a resolved plan: a hit is one lookup, no hashing.
    pub fn get_handle(&self, handle: &PlanHandle) -> Result<L::Item> {
        self.get_keyed(&handle.plan, handle.memory_key)
            .map(|(item, _)| item)
    }

    /// The loaded kernel for `plan`, and where it came from.
    pub fn get_traced(&self, plan: &Plan) -> Result<(L::Item, Level)> {
        self.get_keyed(plan, plan.memory_key())
    }

    fn get_keyed(&self, plan: &Plan, l1_key: PlanKey) -> Result<(L::Item, Level)> {
        if let Some(item) = self.l1.peek(&l1_key) {
            self.recorder.l1_hit();
            return Ok((item, Level::L1));
        }
        let mut level = Level::L1;
        let (item, served) = self.l1.get_or_compute(l1_key, || {
            let (cubin, from) = self.cubin(plan)?;
            level = from;
            self.loader.load(plan, cubin)
        })?;
        let delta = match served {
            Served::Hit | Served::Waited => Stats {
                l1_hits: 1,
                ..Stats::default()
            },
            Served::Computed => Stats {
                l1_misses: 1,
                ..Stats::default()
            },
        };
        self.recorder.record_local(delta);
        Ok((item, level))
    }

    /// The cubin for `plan` from the levels below L1 or a link, without touching L1.
    pub fn cubin(&self, plan: &Plan) -> Result<(Arc<[u8]>, Level)> {
        let request = Request::new(plan, self.linker.as_ref());
        for (i, level) in self.levels.iter().enumerate() {
            if let Some(cubin) = level.get(&request) {
                self.back_fill(&request, &self.levels[..i], &cubin);
                return Ok((cubin.into(), level.served_as()));
            }
        }
        if request.linker().is_none() {
            // No nvJitLink: in strict mode the levels were all there was; otherwise the
            // missing library is the error.
            let mut error = self.not_cached(&request);
            let no_linker = request.into_linker_error();
            if self.config.jit {
                if let Some(no_linker) = no_linker {
                    return Err(no_linker);
                }
            }
            if let (Error::NotCached { looked_in, .. }, Some(why)) = (&mut error, no_linker) {
                looked_in.push_str(&format!(
                    " (no nvJitLink here: {})",
                    why.to_string().lines().next().unwrap_or_default()
                ));
            }
            return Err(error);
        }
        if !self.config.jit {
            return Err(self.not_cached(&request));
        }
        // Single flight, level by level: the guards are held until the link is stored.
        let mut guards = Vec::new();
        for (i, level) in self.levels.iter().enumerate() {
            match level.flight(&request) {
                Flight::Free => {}
                Flight::Held(guard) => guards.push(guard),
                Flight::Found(cubin) => {
                    self.back_fill(&request, &self.levels[..i], &cubin);
                    return Ok((cubin.into(), level.served_as()));
                }
            }
        }
        let cubin = self.link(plan, &request)?;
        for level in &self.levels {
            level.put(&request, &cubin);
        }
        drop(guards);
        Ok((cubin.into(), Level::Link))
    }

    fn back_fill(&self, request: &Request, faster: &[Box<dyn CacheLevel>], cubin: &[u8]) {
        // Each level skips a request without a key itself; asking for it here would load
        // nvJitLink in a process that providers serve.
        for level in faster {
            level.put(request, cubin);
        }
    }

    fn link(&self, plan: &Plan, request: &Request) -> Result<Vec<u8>> {
        let started = Instant::now();
        let linked = self.linker.link(plan);
        let nanos = started.elapsed().as_nanos() as u64;
        match linked {
            Ok(cubin) => {
                tracing::debug!(plan = %plan.name(), key = ?request.key(), ms = nanos as f64 / 1e6, "linked");
                self.recorder.record(Stats {
                    links: 1,
                    link_nanos: nanos,
                    ..Stats::default()
                });
                Ok(cubin)
            }
            Err(e) => {
                self.recorder.record(Stats {
                    link_failures: 1,
                    ..Stats::default()
                });
                // The linker's error, log included, under the plan that failed.
                Err(Error::PlanLink {
                    plan: plan.name().to_string(),
                    target: plan.target(),
                    source: Box::new(e),
                })
            }
        }
    }

    /// The strict-mode error for `plan`: every level looked in, and why each provider
    /// serving its target left it out.
    fn not_cached(&self, request: &Request) -> Error {
        let mut parts = vec![if self.disk.is_some() {
            "memory".to_string()
        } else {
            "memory (disk cache off)".to_string()
        }];
        // In the order the chain asked them.
        parts.extend(self.levels.iter().map(|l| l.describe(request)));
        Error::NotCached {
            plan: request.plan.describe(),
            looked_in: parts.join(", "),
        }
    }
}

fn open_l2(config: &CacheConfig) -> Option<DiskCache> {
    let dir = config.dir.as_deref()?;
    match DiskCache::open(dir, config.max_bytes) {
        Ok(d) => Some(d),
        Err(why) => {
            tracing::warn!(
                "not using the disk cache: {why}; continuing with the in-memory cache only"
            );
            None
        }
    }
}

/// Opens the disk cache of `dir` for maintenance (`ltokit cache …`).
pub fn open_for_maintenance(dir: &Path, max_bytes: u64) -> Result<DiskCache> {
    DiskCache::open(dir, max_bytes).map_err(|why| Error::CacheUnusable {
        dir: dir.to_path_buf(),
        why,
    })
}
