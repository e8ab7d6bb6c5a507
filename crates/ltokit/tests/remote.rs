//! The remote level against a real Redis server (Debian's `redis-server`, started by
//! each test on a free loopback port). A counting linker stands in for nvJitLink, so link
//! counts and timings are exact.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ltokit::cache::{
    CacheConfig, CubinLoader, KernelCache, Level, PlanLinker, RemoteConfig, RemoteMode,
};
use ltokit::plan::{Plan, PlanInput, CACHE_FORMAT_VERSION};
use ltokit::version::Version;
use ltokit::Result;
use ltokit_demo::redis_server::RedisServer;

#[path = "support/scratch.rs"]
mod scratch;
use scratch::scratch_dir;

/// Links into a fake cubin derived from the plan; counts links; takes `delay`.
struct CountingLinker {
    links: AtomicUsize,
    delay: Duration,
}

impl PlanLinker for CountingLinker {
    fn version(&self) -> Result<Version> {
        Ok(Version::new(13, 0))
    }
    fn link(&self, plan: &Plan) -> Result<Vec<u8>> {
        self.links.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        let mut out = format!("\x7fELF cubin of {}", plan.name()).into_bytes();
        out.resize(4096, 0x5a);
        Ok(out)
    }
}

fn linker(delay_ms: u64) -> Arc<CountingLinker> {
    Arc::new(CountingLinker {
        links: AtomicUsize::new(0),
        delay: Duration::from_millis(delay_ms),
    })
}

fn plan(name: &str) -> Plan {
    let mut ir = vec![0xed, 0x43, 0x4e, 0x7f, 1, 65];
    ir.extend_from_slice(name.as_bytes());
    let input = PlanInput::from_bytes(format!("{name}.ltoir"), ir).unwrap();
    Plan::new(name, "k", "sm_90".parse().unwrap(), vec![], vec![input])
}

/// A new, empty folder, removed when the test ends.
fn temp_dir(tag: &str) -> PathBuf {
    scratch_dir(&format!("ltokit-remote-{tag}-"))
}

fn key_file(dir: &Path, name: &str, byte: u8) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, [byte; 48]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// A test's folder, its Redis, and the fleet's settings (`None`: no redis-server here).
fn fleet(tag: &str, mode: RemoteMode) -> Option<(PathBuf, RedisServer, RemoteConfig)> {
    let dir = temp_dir(tag);
    let server = RedisServer::start(&dir.join("redis"))?;
    let config = remote(&server, &key_file(&dir, "fleet.key", 1), mode);
    Some((dir, server, config))
}

fn remote(server: &RedisServer, key: &Path, mode: RemoteMode) -> RemoteConfig {
    let mut c = RemoteConfig::new(&server.url(), key).unwrap();
    c.mode = mode;
    c.timeout = Duration::from_millis(200);
    c.lock_ttl = Duration::from_millis(1500);
    c.backoff = Duration::from_millis(500);
    c
}

/// A node: its own disk cache under `dir`, the shared remote level.
fn node(
    dir: &Path,
    remote: &RemoteConfig,
    linker: &Arc<CountingLinker>,
) -> KernelCache<CubinLoader> {
    let config = CacheConfig::in_dir(dir).with_remote(Some(remote.clone()));
    KernelCache::with_linker(
        config,
        CubinLoader,
        Arc::clone(linker) as Arc<dyn PlanLinker>,
    )
}

fn redis(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

fn entry_name(cache: &KernelCache<CubinLoader>, p: &Plan) -> String {
    format!("ltokit:{CACHE_FORMAT_VERSION}:e:{}", cache.key(p).unwrap())
}

#[test]
fn a_node_gets_what_another_linked_and_back_fills_its_disk() {
    let Some((dir, _server, config)) = fleet("share", RemoteMode::ReadWrite) else {
        return;
    };
    let (la, lb) = (linker(0), linker(0));
    let a = node(&dir.join("a"), &config, &la);
    let p = plan("shared");
    let (cubin_a, level) = a.cubin(&p).unwrap();
    assert_eq!(level, Level::Link);
    assert_eq!(a.stats().remote_writes, 1);
    let b = node(&dir.join("b"), &config, &lb);
    let (cubin_b, level) = b.cubin(&p).unwrap();
    assert_eq!((level, &cubin_b), (Level::Remote, &cubin_a));
    assert_eq!(lb.links.load(Ordering::SeqCst), 0);
    // The hit was written to b's disk: a second node process would find it there.
    let b2 = node(&dir.join("b"), &config, &lb);
    assert_eq!(b2.cubin(&p).unwrap().1, Level::L2);
    assert_eq!(
        b.level_names(),
        ["providers", "disk", "remote"],
        "the chain's order"
    );
}

#[test]
fn bad_remote_entries_are_refused_counted_relinked_and_replaced() {
    let Some((dir, server, config)) = fleet("bad", RemoteMode::ReadWrite) else {
        return;
    };
    let intruder = remote(
        &server,
        &key_file(&dir, "other.key", 2),
        RemoteMode::ReadWrite,
    );
    let p = plan("victim");
    let mut con = redis(&server);
    // A good entry, made by a node of the fleet.
    let seed = node(&dir.join("seed"), &config, &linker(0));
    let (good, _) = seed.cubin(&p).unwrap();
    let name = entry_name(&seed, &p);
    let stored: Vec<u8> = redis::cmd("GET").arg(&name).query(&mut con).unwrap();
    // An entry signed with another key: what a node outside the fleet would write.
    let outsider = node(&dir.join("outsider"), &intruder, &linker(0));
    let _: () = redis::cmd("DEL").arg(&name).query(&mut con).unwrap();
    outsider.cubin(&p).unwrap();
    let wrong_key: Vec<u8> = redis::cmd("GET").arg(&name).query(&mut con).unwrap();
    let mut flipped = stored.clone();
    flipped[100] ^= 0x10;
    let unsigned = stored[..stored.len() - 32].to_vec();
    let truncated = stored[..stored.len() / 2].to_vec();
    for (what, bad) in [
        ("wrong key", wrong_key),
        ("unsigned", unsigned),
        ("truncated", truncated),
        ("bit flip", flipped),
    ] {
        let _: () = redis::cmd("SET")
            .arg(&name)
            .arg(&bad)
            .query(&mut con)
            .unwrap();
        let l = linker(0);
        let n = node(
            &dir.join(format!("n-{}", what.replace(' ', "-"))),
            &config,
            &l,
        );
        let (cubin, level) = n.cubin(&p).unwrap();
        assert_eq!(level, Level::Link, "{what}: refused, so relinked");
        assert_eq!(cubin, good, "{what}");
        assert_eq!(l.links.load(Ordering::SeqCst), 1, "{what}");
        assert_eq!(n.stats().remote_refused, 1, "{what}: counted");
        // Read-write: the relinked entry replaced the bad one.
        let now: Vec<u8> = redis::cmd("GET").arg(&name).query(&mut con).unwrap();
        assert_eq!(now, stored, "{what}: overwritten with a good entry");
    }
}

#[test]
fn read_only_nodes_never_write() {
    let Some((dir, server, config)) = fleet("ro", RemoteMode::Read) else {
        return;
    };
    let l = linker(0);
    let n = node(&dir.join("n"), &config, &l);
    for i in 0..5 {
        assert_eq!(n.cubin(&plan(&format!("p{i}"))).unwrap().1, Level::Link);
    }
    let mut con = redis(&server);
    let keys: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(keys, 0, "no entry and no lock written");
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut con)
        .unwrap();
    assert!(
        !info.contains("cmdstat_set:") && !info.contains("cmdstat_eval"),
        "{info}"
    );
    assert!(info.contains("cmdstat_get:calls=5"), "{info}");
    assert_eq!(n.stats().remote_misses, 5);
}

#[test]
fn a_dead_lock_holder_delays_others_by_its_lease_only() {
    let Some((dir, server, config)) = fleet("lock", RemoteMode::ReadWrite) else {
        return;
    };
    let l = linker(50);
    let n = node(&dir.join("n"), &config, &l);
    let p = plan("orphaned");
    // A node took the lock and died while linking: its lock outlives it by the TTL.
    let lock = format!("ltokit:{CACHE_FORMAT_VERSION}:l:{}", n.key(&p).unwrap());
    let mut con = redis(&server);
    let _: () = redis::cmd("SET")
        .arg(&lock)
        .arg("dead-node")
        .arg("PX")
        .arg(1500)
        .query(&mut con)
        .unwrap();
    let started = Instant::now();
    let (_, level) = n.cubin(&p).unwrap();
    let waited = started.elapsed();
    assert_eq!(level, Level::Link);
    assert_eq!(l.links.load(Ordering::SeqCst), 1);
    assert!(
        waited >= Duration::from_millis(1300) && waited < Duration::from_millis(3000),
        "waited {waited:?} for a lease of 1.5 s"
    );
    // The holder's lock was replaced by ours and released after the link.
    let exists: i64 = redis::cmd("EXISTS").arg(&lock).query(&mut con).unwrap();
    assert_eq!(exists, 0);
}

#[test]
fn concurrent_nodes_link_each_plan_once() {
    let Some((dir, _server, config)) = fleet("flight", RemoteMode::ReadWrite) else {
        return;
    };
    let l = linker(100);
    let plans: Vec<Plan> = (0..6).map(|i| plan(&format!("hot{i}"))).collect();
    let results: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (dir, config, l, plans) = (&dir, &config, &l, &plans);
                s.spawn(move || {
                    // Separate disk caches and L1s: separate nodes.
                    let n = node(&dir.join(format!("node{i}")), config, l);
                    plans
                        .iter()
                        .map(|p| n.cubin(p).unwrap().0.to_vec())
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        l.links.load(Ordering::SeqCst),
        plans.len(),
        "one link per plan"
    );
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
}

#[test]
fn a_dead_redis_costs_at_most_a_timeout_and_the_level_comes_back() {
    let Some((dir, mut server, config)) = fleet("dead", RemoteMode::ReadWrite) else {
        return;
    };
    let l = linker(20);
    let n = node(&dir.join("n"), &config, &l);
    n.cubin(&plan("before")).unwrap();
    server.kill();
    // Every request is still served, by a local link, within one timeout plus the link and
    // the node's own disk writes — 500 ms allowed for those, which a loaded 2-core CI
    // machine once took (606 ms for one request in a fresh-clone run), well under what a
    // request that waited out another node's lock would take (lock_ttl, 1.5 s here).
    let allowed = config.timeout + Duration::from_millis(20 + 500);
    assert!(allowed < config.lock_ttl);
    for i in 0..8 {
        let started = Instant::now();
        let (_, level) = n.cubin(&plan(&format!("during{i}"))).unwrap();
        let took = started.elapsed();
        assert_eq!(level, Level::Link);
        assert!(took < allowed, "request {i} took {took:?}");
    }
    assert!(n.stats().remote_errors >= 3);
    server.restart();
    std::thread::sleep(config.backoff + Duration::from_millis(100));
    // The level is back: what this node links is published again, and found by others.
    n.cubin(&plan("after")).unwrap();
    let other = node(&dir.join("other"), &config, &linker(0));
    assert_eq!(other.cubin(&plan("after")).unwrap().1, Level::Remote);
}
