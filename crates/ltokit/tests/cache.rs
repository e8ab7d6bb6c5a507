//! The kernel cache at the link level (no GPU, no CUDA libraries: a counting linker
//! stands in for nvJitLink, so timings and link counts are exact).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

use ltokit::cache::{CacheConfig, CubinLoader, KernelCache, Level, PlanLinker};
use ltokit::plan::{Plan, PlanInput};
use ltokit::version::Version;
use ltokit::{Error, Result};

#[path = "support/scratch.rs"]
mod scratch;
use scratch::scratch_dir;

/// Holds one plan's link until the test releases it, and says when it started.
struct Gate {
    plan: String,
    entered: mpsc::SyncSender<()>,
    release: Mutex<mpsc::Receiver<()>>,
}

/// Links by hashing the plan's inputs into a fake cubin; counts links; sleeps, or waits
/// at a gate, on request.
#[derive(Default)]
struct FakeLinker {
    links: AtomicUsize,
    gate: Option<Gate>,
    delay: Duration,
}

impl PlanLinker for FakeLinker {
    fn version(&self) -> Result<Version> {
        Ok(Version::new(13, 0))
    }
    fn link(&self, plan: &Plan) -> Result<Vec<u8>> {
        self.links.fetch_add(1, Ordering::SeqCst);
        match &self.gate {
            Some(gate) if gate.plan == plan.name() => {
                let _ = gate.entered.send(());
                let _ = gate.release.lock().unwrap().recv();
            }
            _ => std::thread::sleep(self.delay),
        }
        let mut out = b"\x7fELF fake cubin for ".to_vec();
        out.extend_from_slice(plan.name().as_bytes());
        for input in plan.inputs() {
            out.extend_from_slice(input.hash.as_bytes());
        }
        out.resize(out.len() + 1000, 0xAB);
        Ok(out)
    }
}

fn plan(name: &str) -> Plan {
    let mut ir = vec![0xed, 0x43, 0x4e, 0x7f, 1, 65];
    ir.extend_from_slice(name.as_bytes());
    let input = PlanInput::from_bytes(format!("{name}.ltoir"), ir).unwrap();
    Plan::new(name, "k", "sm_90".parse().unwrap(), vec![], vec![input])
}

/// A path for a cache folder that does not exist yet, inside a temporary folder removed
/// when the test ends.
fn temp_dir(tag: &str) -> PathBuf {
    scratch_dir(&format!("ltokit-cache-{tag}-")).join("cache")
}

fn cache_with(dir: Option<&Path>, linker: Arc<FakeLinker>) -> KernelCache<CubinLoader> {
    let config = CacheConfig {
        dir: dir.map(Path::to_path_buf),
        max_bytes: 1 << 30,
        jit: true,
        ..Default::default()
    };
    KernelCache::with_linker(config, CubinLoader, linker)
}

fn entry_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for shard in std::fs::read_dir(dir.join("v1/entries")).unwrap().flatten() {
        for f in std::fs::read_dir(shard.path()).unwrap().flatten() {
            if f.file_name().to_string_lossy().ends_with(".cubin") {
                out.push(f.path());
            }
        }
    }
    out
}

#[test]
fn sixty_four_threads_one_missing_key_one_link() {
    let dir = temp_dir("flight");
    let linker = Arc::new(FakeLinker {
        delay: Duration::from_millis(100),
        ..Default::default()
    });
    let cache = cache_with(Some(&dir), Arc::clone(&linker));
    let p = plan("shared");
    let barrier = Barrier::new(64);
    let results: Vec<Arc<[u8]>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..64)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    cache.get(&p).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        linker.links.load(Ordering::SeqCst),
        1,
        "exactly one link for 64 concurrent misses"
    );
    assert!(results.iter().all(|r| r == &results[0]));
    let stats = cache.stats();
    assert_eq!(stats.links, 1);
    assert_eq!(stats.l1_misses, 1);
    assert_eq!(stats.l1_hits, 63);
}

#[test]
fn a_slow_link_blocks_neither_hits_nor_other_keys() {
    // Ordering, not timing: the "slow" link is held at a gate until the hits and another
    // key's miss have all completed. Were either to wait behind it, they could not
    // complete before the release; the watchdog then releases the gate and fails.
    let (entered_tx, entered) = mpsc::sync_channel(1);
    let (release, release_rx) = mpsc::channel();
    let linker = Arc::new(FakeLinker {
        gate: Some(Gate {
            plan: "slow".into(),
            entered: entered_tx,
            release: Mutex::new(release_rx),
        }),
        ..Default::default()
    });
    let cache = cache_with(None, Arc::clone(&linker));
    let hot = plan("hot");
    cache.get(&hot).unwrap();
    std::thread::scope(|s| {
        let slow = s.spawn(|| cache.get(&plan("slow")).unwrap());
        entered
            .recv_timeout(Duration::from_secs(60))
            .expect("the slow link starts");
        let (done_tx, done) = mpsc::channel();
        let (cache, hot) = (&cache, &hot);
        s.spawn(move || {
            for _ in 0..1000 {
                let (_, level) = cache.get_traced(hot).unwrap();
                assert_eq!(level, Level::L1);
            }
            let (_, level) = cache.get_traced(&plan("other")).unwrap();
            assert_eq!(level, Level::Link);
            done_tx.send(()).unwrap();
        });
        let completed = done.recv_timeout(Duration::from_secs(60));
        let slow_still_linking = !slow.is_finished();
        release.send(()).unwrap();
        assert!(
            completed.is_ok(),
            "hits or another key's miss waited behind a link in flight"
        );
        assert!(slow_still_linking, "the slow link ended before the release");
        slow.join().unwrap();
    });
    assert_eq!(linker.links.load(Ordering::SeqCst), 3);
}

#[test]
fn disk_hits_survive_a_new_process_cache_and_are_exact() {
    let dir = temp_dir("persist");
    let linker = Arc::new(FakeLinker::default());
    let first = cache_with(Some(&dir), Arc::clone(&linker))
        .get(&plan("a"))
        .unwrap();
    let second_cache = cache_with(Some(&dir), Arc::clone(&linker));
    let (again, level) = second_cache.get_traced(&plan("a")).unwrap();
    assert_eq!(level, Level::L2);
    assert_eq!(first, again);
    assert_eq!(linker.links.load(Ordering::SeqCst), 1);
    let persisted = second_cache.disk().unwrap().persisted_stats();
    assert_eq!(
        (persisted.links, persisted.l2_hits, persisted.l2_misses),
        (1, 1, 1)
    );
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the cache directory must be private");
}

/// Damages the single entry of `dir` with `damage`, then checks that the next request
/// detects it, removes it, relinks, and counts one corruption.
fn damaged_entry_is_relinked(tag: &str, damage: impl Fn(&mut Vec<u8>)) {
    let dir = temp_dir(tag);
    let linker = Arc::new(FakeLinker::default());
    let good = cache_with(Some(&dir), Arc::clone(&linker))
        .get(&plan("p"))
        .unwrap();
    let files = entry_files(&dir);
    assert_eq!(files.len(), 1);
    let mut bytes = std::fs::read(&files[0]).unwrap();
    damage(&mut bytes);
    std::fs::write(&files[0], &bytes).unwrap();
    let cache = cache_with(Some(&dir), Arc::clone(&linker));
    let (relinked, level) = cache.get_traced(&plan("p")).unwrap();
    assert_eq!(
        level,
        Level::Link,
        "{tag}: a damaged entry must not be served"
    );
    assert_eq!(relinked, good);
    assert_eq!(linker.links.load(Ordering::SeqCst), 2);
    assert_eq!(cache.stats().corrupt, 1, "{tag}");
    assert_eq!(cache.disk().unwrap().persisted_stats().corrupt, 1, "{tag}");
    // The relinked entry is good again.
    let (_, level) = cache_with(Some(&dir), Arc::clone(&linker))
        .get_traced(&plan("p"))
        .unwrap();
    assert_eq!(level, Level::L2);
}

#[test]
fn flipped_byte_is_detected() {
    damaged_entry_is_relinked("flip", |b| {
        let at = b.len() - 10;
        b[at] ^= 0x40;
    });
}

#[test]
fn truncated_entry_is_detected() {
    damaged_entry_is_relinked("trunc", |b| b.truncate(b.len() - 100));
    damaged_entry_is_relinked("trunc-header", |b| b.truncate(40));
}

#[test]
fn entry_of_another_format_version_is_detected() {
    damaged_entry_is_relinked("version", |b| b[8] = 99);
}

#[test]
fn entry_under_another_key_is_detected() {
    damaged_entry_is_relinked("key", |b| b[20] ^= 1);
}

#[test]
fn loose_or_foreign_directories_are_not_used() {
    let dir = temp_dir("loose");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let linker = Arc::new(FakeLinker::default());
    let cache = cache_with(Some(&dir), Arc::clone(&linker));
    assert!(
        cache.disk().is_none(),
        "a world-writable cache directory must be bypassed"
    );
    cache.get(&plan("x")).unwrap(); // still works, in memory

    let i_am_root = rustix::process::geteuid().is_root();
    if !i_am_root {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "PARTLY SKIPPED loose_or_foreign_directories_are_not_used: not root, so a directory owned by another user cannot be made"
        );
    }
    if i_am_root {
        let foreign = temp_dir("foreign");
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&foreign, Some(4242), Some(4242)).unwrap();
        let cache = cache_with(Some(&foreign), Arc::clone(&linker));
        assert!(
            cache.disk().is_none(),
            "a cache directory owned by another user must be bypassed"
        );
    }
}

#[test]
fn loose_entries_are_not_loaded() {
    let dir = temp_dir("loose-entry");
    let linker = Arc::new(FakeLinker::default());
    cache_with(Some(&dir), Arc::clone(&linker))
        .get(&plan("p"))
        .unwrap();
    let file = &entry_files(&dir)[0];
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (_, level) = cache_with(Some(&dir), Arc::clone(&linker))
        .get_traced(&plan("p"))
        .unwrap();
    assert_eq!(
        level,
        Level::Link,
        "a group/other-writable entry must not be loaded"
    );
    // The relink replaced it with a private entry.
    assert_eq!(
        std::fs::metadata(&entry_files(&dir)[0])
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
}

#[test]
fn eviction_is_least_recently_used_and_bounds_the_size() {
    let dir = temp_dir("evict");
    let linker = Arc::new(FakeLinker::default());
    let big = cache_with(Some(&dir), Arc::clone(&linker));
    for name in ["a", "b", "c"] {
        big.get(&plan(name)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let entry_size = entry_files(&dir)[0].metadata().unwrap().len();
    // A fresh process uses "a" again: it becomes the most recently used.
    let config = CacheConfig {
        dir: Some(dir.clone()),
        max_bytes: entry_size * 2 + entry_size / 2,
        jit: true,
        ..Default::default()
    };
    let bounded = KernelCache::with_linker(
        config,
        CubinLoader,
        Arc::clone(&linker) as Arc<dyn PlanLinker>,
    );
    assert_eq!(bounded.get_traced(&plan("a")).unwrap().1, Level::L2);
    std::thread::sleep(Duration::from_millis(20));
    bounded.get(&plan("d")).unwrap(); // over the bound: evict b, then c
    let total: u64 = entry_files(&dir)
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    assert!(
        total <= entry_size * 2 + entry_size / 2,
        "size bound violated: {total}"
    );
    assert_eq!(bounded.stats().evictions, 2);
    let probe = cache_with(Some(&dir), Arc::clone(&linker));
    assert_eq!(
        probe.get_traced(&plan("a")).unwrap().1,
        Level::L2,
        "recently used a must survive"
    );
    assert_eq!(
        probe.get_traced(&plan("d")).unwrap().1,
        Level::L2,
        "the new entry must survive"
    );
    assert_eq!(
        probe.get_traced(&plan("b")).unwrap().1,
        Level::Link,
        "least recently used b must be gone"
    );
}

#[test]
fn strict_mode_names_the_missing_plan() {
    let dir = temp_dir("strict");
    let linker = Arc::new(FakeLinker::default());
    let strict = |dir: &Path| {
        KernelCache::with_linker(
            CacheConfig {
                dir: Some(dir.to_path_buf()),
                max_bytes: 1 << 30,
                jit: false,
                ..Default::default()
            },
            CubinLoader,
            Arc::clone(&linker) as Arc<dyn PlanLinker>,
        )
    };
    let err = strict(&dir).get(&plan("needed")).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::NotCached { .. }), "{text}");
    assert!(
        text.contains("\"needed\"") && text.contains("sm_90") && text.contains("needed.ltoir"),
        "{text}"
    );
    assert_eq!(linker.links.load(Ordering::SeqCst), 0);
    cache_with(Some(&dir), Arc::clone(&linker))
        .get(&plan("needed"))
        .unwrap();
    assert_eq!(
        strict(&dir).get_traced(&plan("needed")).unwrap().1,
        Level::L2
    );
}

#[test]
fn an_unwritable_disk_degrades_to_memory() {
    let dir = temp_dir("readonly");
    let linker = Arc::new(FakeLinker::default());
    let cache = cache_with(Some(&dir), Arc::clone(&linker));
    assert!(cache.disk().is_some());
    // Make publishing impossible: the entries folder becomes a file.
    std::fs::remove_dir_all(dir.join("v1/entries")).unwrap();
    std::fs::write(dir.join("v1/entries"), b"not a directory").unwrap();
    let (cubin, level) = cache.get_traced(&plan("p")).unwrap();
    assert_eq!(level, Level::Link);
    assert!(!cubin.is_empty());
    assert!(
        !cache.disk().unwrap().writable(),
        "writes must stop after the first failure"
    );
    let (_, level) = cache.get_traced(&plan("p")).unwrap();
    assert_eq!(level, Level::L1);
    cache.get(&plan("q")).unwrap();
}

#[test]
fn failed_links_are_not_cached_and_reach_every_waiter() {
    struct Failing(AtomicUsize);
    impl PlanLinker for Failing {
        fn version(&self) -> Result<Version> {
            Ok(Version::new(13, 0))
        }
        fn link(&self, _plan: &Plan) -> Result<Vec<u8>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            Err(Error::InvalidArgument("the linker said no".into()))
        }
    }
    let linker = Arc::new(Failing(AtomicUsize::new(0)));
    let cache = KernelCache::with_linker(
        CacheConfig {
            dir: None,
            max_bytes: 0,
            jit: true,
            ..Default::default()
        },
        CubinLoader,
        Arc::clone(&linker) as Arc<dyn PlanLinker>,
    );
    let p = plan("bad");
    let errors: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| s.spawn(|| cache.get(&p).unwrap_err().to_string()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        errors.iter().all(|e| e.contains("the linker said no")),
        "{errors:?}"
    );
    let before = linker.0.load(Ordering::SeqCst);
    assert!(cache.get(&p).is_err());
    assert_eq!(
        linker.0.load(Ordering::SeqCst),
        before + 1,
        "a failure must not be cached"
    );
    assert_eq!(cache.stats().link_failures, before as u64 + 1);
}
