//! The remote level: a fleet-shared store on Redis, so that a node's first request for
//! a plan another node linked costs one round trip instead of a link.
//!
//! An entry is stored under `ltokit:<cache format>:e:<key>` as the disk cache's
//! self-checking entry (header with key, size and BLAKE3, then the cubin) followed by a
//! 32-byte keyed BLAKE3 of the Redis key and the entry, made with the fleet key. Every
//! read checks the signature and the entry; an unsigned, wrongly signed, truncated or
//! corrupt entry is refused, counted, and (in read-write mode) replaced by the relinked
//! one — one compromised or broken node cannot poison the others.
//!
//! Fleet single flight: before linking, a node takes `ltokit:<cache format>:l:<key>`
//! with `SET NX PX <ttl>`; the others poll for the entry until it appears, the lock
//! expires (its holder died: one of them takes it and links), or their wait bound
//! passes (they link themselves). Every operation has a timeout; after
//! [`FAILURES_BEFORE_BACKOFF`] failures in a row the level is skipped for the back-off
//! period, with one warning, so a dead Redis costs a request at most one timeout and
//! never fails one that a local link can serve.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::disk::{encode_entry, entry_payload};
use super::level::{CacheLevel, Flight, Recorder, Request};
use super::remote_config::{RemoteConfig, RemoteMode};
use super::stats::Stats;
use super::Level;
use crate::plan::{PlanKey, CACHE_FORMAT_VERSION};

/// Failures in a row after which the level backs off.
pub const FAILURES_BEFORE_BACKOFF: u32 = 3;
/// How often a waiter polls for the entry another node is linking.
const POLL: Duration = Duration::from_millis(20);
/// Size of the signature appended to each entry.
const SIGNATURE_BYTES: usize = 32;

/// Deletes the lock only if it still holds this node's token.
const UNLOCK: &str = r"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

struct Health {
    failures: u32,
    /// Skip the level until then (set after a failure: the rest of that request, and
    /// for the back-off period after repeated failures).
    skip_until: Option<Instant>,
    backing_off: bool,
}

struct Shared {
    config: RemoteConfig,
    client: Option<redis::Client>,
    connection: Mutex<Option<redis::Connection>>,
    health: Mutex<Health>,
    recorder: Arc<Recorder>,
}

/// The Redis level.
pub struct RemoteLevel {
    shared: Arc<Shared>,
}

fn entry_key(key: &PlanKey) -> String {
    format!("ltokit:{CACHE_FORMAT_VERSION}:e:{key}")
}

fn lock_key(key: &PlanKey) -> String {
    format!("ltokit:{CACHE_FORMAT_VERSION}:l:{key}")
}

/// Signs `entry` stored under `redis_key`.
fn sign(signing_key: &[u8; 32], redis_key: &str, entry: &[u8]) -> [u8; SIGNATURE_BYTES] {
    let mut h = blake3::Hasher::new_keyed(signing_key);
    h.update(&(redis_key.len() as u64).to_le_bytes());
    h.update(redis_key.as_bytes());
    h.update(entry);
    *h.finalize().as_bytes()
}

/// The signed form of `cubin` for `key`.
pub fn seal(
    signing_key: &[u8; 32],
    request_key: &PlanKey,
    target: Option<crate::Target>,
    cubin: &[u8],
) -> Vec<u8> {
    let mut value = encode_entry(request_key, target, cubin);
    let signature = sign(signing_key, &entry_key(request_key), &value);
    value.extend_from_slice(&signature);
    value
}

/// The cubin in a stored value, after checking its signature and its entry; the error
/// says why it was refused.
pub fn open_sealed(signing_key: &[u8; 32], key: &PlanKey, value: &[u8]) -> Result<Vec<u8>, String> {
    if value.len() < SIGNATURE_BYTES {
        return Err(format!("{} bytes: too short to be signed", value.len()));
    }
    let (entry, signature) = value.split_at(value.len() - SIGNATURE_BYTES);
    let expected = blake3::Hash::from(sign(signing_key, &entry_key(key), entry));
    let found = blake3::Hash::from(<[u8; SIGNATURE_BYTES]>::try_from(signature).unwrap_or([0; 32]));
    // blake3::Hash compares in constant time.
    if expected != found {
        return Err("unsigned or signed with another fleet key".into());
    }
    entry_payload(entry, key).map(<[u8]>::to_vec)
}

impl RemoteLevel {
    /// A level for `config`. An address the client cannot parse leaves the level off,
    /// with a warning.
    pub fn new(config: RemoteConfig, recorder: Arc<Recorder>) -> Self {
        let client = match redis::Client::open(config.url.as_str()) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!("not using the remote cache {}: {e}", config.url);
                None
            }
        };
        RemoteLevel {
            shared: Arc::new(Shared {
                config,
                client,
                connection: Mutex::new(None),
                health: Mutex::new(Health {
                    failures: 0,
                    skip_until: None,
                    backing_off: false,
                }),
                recorder,
            }),
        }
    }

    /// Whether the store answers now (for `ltokit doctor`): the round-trip time of a
    /// PING, or why not.
    pub fn ping(&self) -> Result<Duration, String> {
        let started = Instant::now();
        self.shared
            .run(|c| redis::cmd("PING").query::<String>(c))
            .map(|_| started.elapsed())
            .ok_or_else(|| "unreachable (see the warning above)".to_string())
    }

    /// Publishes `cubin` as the entry of `key` (`ltokit cache push --remote`): true when
    /// stored. A read-only level publishes nothing.
    pub fn publish(&self, key: &PlanKey, target: Option<crate::Target>, cubin: &[u8]) -> bool {
        if self.shared.config.mode == RemoteMode::Read {
            return false;
        }
        let value = seal(&self.shared.config.signing_key, key, target, cubin);
        let redis_key = entry_key(key);
        let stored = self
            .shared
            .run(|c| redis::cmd("SET").arg(&redis_key).arg(&value).query::<()>(c))
            .is_some();
        if stored {
            self.record(Stats {
                remote_writes: 1,
                ..Stats::default()
            });
        }
        stored
    }

    fn record(&self, delta: Stats) {
        self.shared.recorder.record(delta);
    }
}

impl Shared {
    /// Runs `op` on the connection (made on first use), within the timeouts; `None` on
    /// failure or while the level is skipped.
    fn run<T>(
        &self,
        op: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Option<T> {
        let client = self.client.as_ref()?;
        {
            let mut health = self.health.lock();
            if let Some(until) = health.skip_until {
                if Instant::now() < until {
                    drop(health);
                    self.recorder.record_local(Stats {
                        remote_errors: 1,
                        ..Stats::default()
                    });
                    return None;
                }
                health.skip_until = None;
            }
        }
        let mut slot = self.connection.lock();
        let result = (|| {
            if slot.is_none() {
                let c = client.get_connection_with_timeout(self.config.timeout)?;
                c.set_read_timeout(Some(self.config.timeout))?;
                c.set_write_timeout(Some(self.config.timeout))?;
                *slot = Some(c);
            }
            match slot.as_mut() {
                Some(c) => op(c),
                None => Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "no connection",
                ))),
            }
        })();
        match result {
            Ok(v) => {
                drop(slot);
                let mut health = self.health.lock();
                if health.backing_off {
                    tracing::info!("the remote cache {} answers again", self.config.url);
                }
                *health = Health {
                    failures: 0,
                    skip_until: None,
                    backing_off: false,
                };
                Some(v)
            }
            Err(e) => {
                *slot = None;
                drop(slot);
                self.failed(&e);
                None
            }
        }
    }

    fn failed(&self, error: &redis::RedisError) {
        self.recorder.record_local(Stats {
            remote_errors: 1,
            ..Stats::default()
        });
        let mut health = self.health.lock();
        health.failures += 1;
        let now = Instant::now();
        if health.failures >= FAILURES_BEFORE_BACKOFF {
            if !health.backing_off {
                tracing::warn!(
                    "the remote cache {} failed {} times in a row ({error}); skipping it for {:?}",
                    self.config.url,
                    health.failures,
                    self.config.backoff
                );
            }
            health.backing_off = true;
            health.skip_until = Some(now + self.config.backoff);
        } else {
            // The rest of this request goes on without the level.
            health.skip_until = Some(now + self.config.timeout);
        }
    }

    /// Reads and checks the entry of `key`; a refusal is warned about and counted when
    /// `first_look` (a request's later looks at the same bad entry are not).
    fn get_checked(&self, key: &PlanKey, first_look: bool) -> Lookup {
        let redis_key = entry_key(key);
        let Some(value) = self.run(|c| {
            redis::cmd("GET")
                .arg(&redis_key)
                .query::<Option<Vec<u8>>>(c)
        }) else {
            return Lookup::Failed;
        };
        match value {
            None => Lookup::Missing,
            Some(value) => match open_sealed(&self.config.signing_key, key, &value) {
                Ok(cubin) => Lookup::Found(cubin),
                Err(why) => {
                    if first_look {
                        tracing::warn!("refusing the remote cache entry {redis_key}: {why}");
                        self.recorder.record(Stats {
                            remote_refused: 1,
                            ..Stats::default()
                        });
                    }
                    Lookup::Refused
                }
            },
        }
    }
}

enum Lookup {
    Found(Vec<u8>),
    Missing,
    Refused,
    Failed,
}

/// Holds the fleet lock of one key; releasing it is best effort (it expires anyway).
struct LockGuard {
    shared: Arc<Shared>,
    key: String,
    token: String,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let script = redis::Script::new(UNLOCK);
        let _ = self
            .shared
            .run(|c| script.key(&self.key).arg(&self.token).invoke::<i64>(c));
    }
}

fn token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = blake3::Hasher::new();
    h.update(&std::process::id().to_le_bytes())
        .update(&nanos.to_le_bytes())
        .update(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.finalize().to_hex()[..32].to_string()
}

impl CacheLevel for RemoteLevel {
    fn name(&self) -> &'static str {
        "remote"
    }

    fn served_as(&self) -> Level {
        Level::Remote
    }

    fn get(&self, request: &Request) -> Option<Vec<u8>> {
        let key = request.key()?;
        match self.shared.get_checked(&key, true) {
            Lookup::Found(cubin) => {
                self.record(Stats {
                    remote_hits: 1,
                    ..Stats::default()
                });
                Some(cubin)
            }
            Lookup::Missing => {
                self.record(Stats {
                    remote_misses: 1,
                    ..Stats::default()
                });
                None
            }
            Lookup::Refused | Lookup::Failed => None,
        }
    }

    fn put(&self, request: &Request, cubin: &[u8]) {
        if let Some(key) = request.key() {
            self.publish(&key, Some(request.plan.target()), cubin);
        }
    }

    fn flight(&self, request: &Request) -> Flight {
        let Some(key) = request.key() else {
            return Flight::Free;
        };
        if self.shared.config.mode == RemoteMode::Read {
            return Flight::Free;
        }
        let lock = lock_key(&key);
        let token = token();
        let ttl_ms = self.shared.config.lock_ttl.as_millis() as u64;
        // Bounded: the holder's whole lease, then a link of our own.
        let deadline = Instant::now() + self.shared.config.lock_ttl + self.shared.config.timeout;
        loop {
            let taken = self.shared.run(|c| {
                redis::cmd("SET")
                    .arg(&lock)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query::<Option<String>>(c)
            });
            match taken {
                None => return Flight::Free,
                Some(Some(_)) => {
                    let guard = LockGuard {
                        shared: Arc::clone(&self.shared),
                        key: lock,
                        token,
                    };
                    // Linked by another node between our miss and the lock?
                    return match self.shared.get_checked(&key, false) {
                        Lookup::Found(cubin) => {
                            self.record(Stats {
                                remote_hits: 1,
                                ..Stats::default()
                            });
                            Flight::Found(cubin)
                        }
                        _ => Flight::Held(Box::new(guard)),
                    };
                }
                Some(None) => {}
            }
            // Another node is linking it: wait for its entry.
            std::thread::sleep(POLL);
            match self.shared.get_checked(&key, false) {
                Lookup::Found(cubin) => {
                    self.record(Stats {
                        remote_hits: 1,
                        ..Stats::default()
                    });
                    return Flight::Found(cubin);
                }
                Lookup::Failed => return Flight::Free,
                Lookup::Missing | Lookup::Refused => {}
            }
            if Instant::now() >= deadline {
                tracing::warn!(
                    "waited {:?} for another node to link {}; linking here",
                    self.shared.config.lock_ttl,
                    request.plan.name()
                );
                return Flight::Free;
            }
        }
    }

    fn describe(&self, _request: &Request) -> String {
        format!("remote cache {}", self.shared.config.url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;

    #[test]
    fn sealed_entries_open_only_with_the_same_key_and_intact() {
        let key = PlanKey(Digest::of(b"plan"));
        let fleet = [3u8; 32];
        let cubin = vec![9u8; 1000];
        let value = seal(&fleet, &key, None, &cubin);
        assert_eq!(open_sealed(&fleet, &key, &value).unwrap(), cubin);
        assert!(open_sealed(&[4u8; 32], &key, &value)
            .unwrap_err()
            .contains("another fleet key"));
        let other = PlanKey(Digest::of(b"other plan"));
        assert!(open_sealed(&fleet, &other, &value).is_err());
        let mut flipped = value.clone();
        flipped[200] ^= 1;
        assert!(open_sealed(&fleet, &key, &flipped).is_err());
        assert!(open_sealed(&fleet, &key, &value[..value.len() - 40]).is_err());
        // An entry without a signature: the disk format alone is refused.
        let unsigned = encode_entry(&key, None, &cubin);
        assert!(open_sealed(&fleet, &key, &unsigned).is_err());
    }
}
