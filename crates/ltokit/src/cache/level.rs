//! The levels below L1: one trait, one file per level (`providers`, `disk_level`,
//! `remote`), and the counters they share.
//!
//! The chain ([`super::KernelCache`]) resolves a request once ([`Request`]: the plan, its
//! key under this process's nvJitLink), asks each level in order, back-fills the faster
//! levels on a hit, and links only when every level missed — after each level has taken
//! its part of the single flight ([`CacheLevel::flight`]), so that one process of a node,
//! and one node of a fleet, links a plan that many ask for at once.

use std::cell::OnceCell;
use std::sync::Arc;

use super::disk::DiskCache;
use super::stats::{Counters, Stats};
use super::{Level, PlanLinker};
use crate::error::Result;
use crate::plan::{Plan, PlanKey};
use crate::version::Version;

/// One request, resolved once for every level. The key is computed on first use, so
/// that a request a provider serves never loads nvJitLink (whose version is part of
/// the key).
pub struct Request<'a> {
    /// The plan.
    pub plan: &'a Plan,
    linker: &'a dyn PlanLinker,
    resolved: OnceCell<Result<Version>>,
}

impl<'a> Request<'a> {
    /// A request for `plan`, keyed under `linker`'s version when a level asks.
    pub fn new(plan: &'a Plan, linker: &'a dyn PlanLinker) -> Self {
        Request {
            plan,
            linker,
            resolved: OnceCell::new(),
        }
    }

    /// The nvJitLink version the key is computed for; `None` when there is no nvJitLink
    /// (a deployment served only by prepared caches).
    pub fn linker(&self) -> Option<Version> {
        self.resolved
            .get_or_init(|| self.linker.version())
            .as_ref()
            .ok()
            .copied()
    }

    /// The plan's key under [`Request::linker`].
    pub fn key(&self) -> Option<PlanKey> {
        self.linker().map(|v| self.plan.key(v))
    }

    /// Why there is no linker, if there is none (resolving the key if nobody did yet).
    pub fn into_linker_error(self) -> Option<crate::Error> {
        let _ = self.resolved.get_or_init(|| self.linker.version());
        self.resolved.into_inner().and_then(Result::err)
    }
}

/// What a level's part of the single flight came to.
pub enum Flight {
    /// Nothing to hold (a read-only level, or a level that is off).
    Free,
    /// The cubin appeared while waiting (another process or node linked it).
    Found(Vec<u8>),
    /// This process is the one to link; dropping the guard releases the others.
    Held(Box<dyn Send>),
}

/// One level of the kernel cache below L1.
pub trait CacheLevel: Send + Sync {
    /// Short name for logs and `ltokit cache stats` ("providers", "disk", "remote").
    fn name(&self) -> &'static str;

    /// How a hit at this level is reported.
    fn served_as(&self) -> Level;

    /// The cubin for `request`, verified, or `None`. Failures are this level's business
    /// (counted, warned about once, the entry refused): the chain goes on below.
    fn get(&self, request: &Request) -> Option<Vec<u8>>;

    /// Stores a cubin found below this level or linked. Read-only levels ignore it.
    fn put(&self, _request: &Request, _cubin: &[u8]) {}

    /// Takes this level's part of the single flight before a link. Bounded: a level
    /// never waits longer than its own timeout.
    fn flight(&self, _request: &Request) -> Flight {
        Flight::Free
    }

    /// Where this level looked, for the strict-mode error (e.g. "disk cache /path").
    fn describe(&self, request: &Request) -> String;
}

/// Where levels count what they do: this process's counters and, when there is a disk
/// cache, the counters persisted with it.
#[derive(Default)]
pub struct Recorder {
    counters: Counters,
    persisted: Option<Arc<DiskCache>>,
}

impl Recorder {
    /// Counts into `persisted` too, when given.
    pub fn new(persisted: Option<Arc<DiskCache>>) -> Self {
        Recorder {
            counters: Counters::default(),
            persisted,
        }
    }

    /// Adds `delta` here and (all but the in-process fields) to the persisted counters.
    pub fn record(&self, delta: Stats) {
        self.counters.add(delta);
        if let Some(disk) = &self.persisted {
            disk.record(Stats {
                l1_hits: 0,
                l1_misses: 0,
                ..delta
            });
        }
    }

    /// Adds `delta` to this process's counters only.
    pub fn record_local(&self, delta: Stats) {
        self.counters.add(delta);
    }

    /// Counts one L1 hit (the hot path).
    pub fn l1_hit(&self) {
        self.counters.add_l1_hit();
    }

    /// This process's counters.
    pub fn snapshot(&self) -> Stats {
        self.counters.snapshot()
    }
}
