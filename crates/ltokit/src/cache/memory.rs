//! L1: the in-process map from plan key to loaded kernel, with single flight.
//!
//! The map's mutex is held only to look up or insert a slot, never while linking or
//! loading: a miss installs a *pending* slot and computes outside the lock; concurrent
//! misses for the same key wait on that slot's condition variable; hits, and misses
//! for other keys, never wait behind a computation in flight.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::plan::PlanKey;

struct Flight<T> {
    outcome: Mutex<Option<std::result::Result<T, String>>>,
    done: Condvar,
}

enum Slot<T> {
    Ready(T),
    Pending(Arc<Flight<T>>),
}

/// How a lookup was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// Found ready.
    Hit,
    /// Waited for another thread's computation of the same key.
    Waited,
    /// Computed by this call.
    Computed,
}

/// The in-process cache.
pub struct MemoryCache<T> {
    map: Mutex<HashMap<PlanKey, Slot<T>>>,
}

impl<T> Default for MemoryCache<T> {
    fn default() -> Self {
        MemoryCache {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Clone> MemoryCache<T> {
    /// The value for `key` if ready, without waiting.
    pub fn peek(&self, key: &PlanKey) -> Option<T> {
        match self.map.lock().get(key) {
            Some(Slot::Ready(v)) => Some(v.clone()),
            _ => None,
        }
    }

    /// Returns the value for `key`, computing it with `compute` at most once across
    /// concurrent callers. A failed computation is not cached; its waiters get the error.
    pub fn get_or_compute(
        &self,
        key: PlanKey,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<(T, Served)> {
        let flight = {
            let mut map = self.map.lock();
            match map.get(&key) {
                Some(Slot::Ready(v)) => return Ok((v.clone(), Served::Hit)),
                Some(Slot::Pending(f)) => Arc::clone(f),
                None => {
                    let f = Arc::new(Flight {
                        outcome: Mutex::new(None),
                        done: Condvar::new(),
                    });
                    map.insert(key, Slot::Pending(Arc::clone(&f)));
                    drop(map);
                    return self.lead(key, f, compute);
                }
            }
        };
        let mut outcome = flight.outcome.lock();
        loop {
            match outcome.as_ref() {
                Some(Ok(v)) => return Ok((v.clone(), Served::Waited)),
                Some(Err(message)) => {
                    return Err(Error::Flight {
                        key: key.to_string(),
                        message: message.clone(),
                    })
                }
                None => flight.done.wait(&mut outcome),
            }
        }
    }

    fn lead(
        &self,
        key: PlanKey,
        flight: Arc<Flight<T>>,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<(T, Served)> {
        // The guard completes the flight even if `compute` panics, so waiters never hang.
        let mut guard = LeaderGuard {
            cache: self,
            key,
            flight,
            finished: false,
        };
        let result = compute();
        guard.finish(&result);
        result.map(|v| (v, Served::Computed))
    }
}

struct LeaderGuard<'a, T: Clone> {
    cache: &'a MemoryCache<T>,
    key: PlanKey,
    flight: Arc<Flight<T>>,
    finished: bool,
}

impl<T: Clone> LeaderGuard<'_, T> {
    /// Publishes the leader's outcome. The leader keeps its own error; waiters get its
    /// text (an [`Error`] is not `Clone`).
    fn finish(&mut self, result: &Result<T>) {
        {
            let mut map = self.cache.map.lock();
            match result {
                Ok(v) => map.insert(self.key, Slot::Ready(v.clone())),
                Err(_) => map.remove(&self.key),
            };
        }
        *self.flight.outcome.lock() = Some(match result {
            Ok(v) => Ok(v.clone()),
            Err(e) => Err(e.to_string()),
        });
        self.flight.done.notify_all();
        self.finished = true;
    }
}

impl<T: Clone> Drop for LeaderGuard<'_, T> {
    fn drop(&mut self) {
        if !self.finished {
            self.cache.map.lock().remove(&self.key);
            *self.flight.outcome.lock() =
                Some(Err("the thread computing this entry panicked".into()));
            self.flight.done.notify_all();
        }
    }
}
