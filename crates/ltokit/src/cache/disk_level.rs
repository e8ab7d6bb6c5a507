//! The disk level (L2): [`DiskCache`] as a level of the chain, with its per-key lock
//! file as this node's part of the single flight.

use std::sync::Arc;

use super::disk::{DiskCache, Lookup};
use super::level::{CacheLevel, Flight, Recorder, Request};
use super::stats::Stats;
use super::Level;
use crate::plan::PlanKey;

/// The disk cache as a level.
pub struct DiskLevel {
    disk: Arc<DiskCache>,
    recorder: Arc<Recorder>,
}

impl DiskLevel {
    /// A level over `disk`.
    pub fn new(disk: Arc<DiskCache>, recorder: Arc<Recorder>) -> Self {
        DiskLevel { disk, recorder }
    }

    fn lookup(&self, key: &PlanKey) -> Option<Vec<u8>> {
        match self.disk.get(key) {
            Lookup::Hit(cubin) => {
                self.recorder.record(Stats {
                    l2_hits: 1,
                    bytes_read: cubin.len() as u64,
                    ..Stats::default()
                });
                Some(cubin)
            }
            Lookup::Miss => None,
            Lookup::Corrupt(why) => {
                tracing::warn!("removed a corrupt disk-cache entry, relinking: {why}");
                self.recorder.record(Stats {
                    corrupt: 1,
                    ..Stats::default()
                });
                None
            }
            Lookup::Untrusted(why) => {
                tracing::warn!("ignoring a disk-cache entry: {why}");
                None
            }
        }
    }

    fn degrade(&self, error: &std::io::Error) {
        if self.disk.disable_writes() {
            tracing::warn!(
                "the disk cache at {} cannot be written ({error}); continuing without writing to it",
                self.disk.root().display()
            );
        }
    }
}

impl CacheLevel for DiskLevel {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn served_as(&self) -> Level {
        Level::L2
    }

    fn get(&self, request: &Request) -> Option<Vec<u8>> {
        let Some(key) = request.key() else {
            // No nvJitLink to name the key with: search under the keys of every linker
            // version that made entries here.
            return self
                .disk
                .linkers_seen()
                .into_iter()
                .find_map(|linker| self.lookup(&request.plan.key(linker)));
        };
        let found = self.lookup(&key);
        if found.is_none() {
            self.recorder.record(Stats {
                l2_misses: 1,
                ..Stats::default()
            });
        }
        found
    }

    fn put(&self, request: &Request, cubin: &[u8]) {
        let (Some(key), Some(linker)) = (request.key(), request.linker()) else {
            return;
        };
        if !self.disk.writable() {
            return;
        }
        match self
            .disk
            .put(&key, Some(request.plan.target()), cubin)
            .and_then(|evicted| self.disk.remember_linker(linker).map(|()| evicted))
        {
            Ok(evicted) => self.recorder.record(Stats {
                bytes_written: cubin.len() as u64,
                evictions: evicted,
                ..Stats::default()
            }),
            Err(e) => self.degrade(&e),
        }
    }

    fn flight(&self, request: &Request) -> Flight {
        let Some(key) = request.key() else {
            return Flight::Free;
        };
        if !self.disk.writable() {
            return Flight::Free;
        }
        // Cross-process single flight: one process links, the others find its entry.
        match self.disk.lock(&key) {
            Ok(lock) => match self.lookup(&key) {
                Some(cubin) => Flight::Found(cubin),
                None => Flight::Held(Box::new(lock)),
            },
            Err(e) => {
                self.degrade(&e);
                Flight::Free
            }
        }
    }

    fn describe(&self, _request: &Request) -> String {
        format!("disk cache {}", self.disk.root().display())
    }
}
