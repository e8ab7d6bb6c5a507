//! The engine's kernels: each plan linked (or fetched from the kernel cache) and loaded
//! once per engine; the plans a search needs are loaded in parallel, and plans a search
//! can do without for now (the list-major scan, whose kernel links in about a second)
//! are loaded on a background thread while the search runs another way; the kernels a
//! first search most likely needs are queued in order for a few background threads from
//! the start of a build or an upload.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use ltokit::bundle::Bundle;
use ltokit::cache::{KernelCache, PlanHandle};
use ltokit::launch::{Kernel, ModuleLoader, Param};
use ltokit::{Error, Result, Target};

/// A kernel a search needs: its plan, declared parameters and dynamic shared memory.
#[derive(Clone)]
pub(crate) struct KernelSpec {
    pub plan: String,
    pub signature: &'static [Param],
    pub shared: usize,
}

/// Loaded kernels, shared with the background loaders.
pub(crate) struct KernelSet {
    cache: KernelCache<ModuleLoader>,
    bundle: Arc<Bundle>,
    target: Target,
    loaded: Mutex<HashMap<String, LoadedKernel>>,
    /// Plans being loaded in the background.
    pending: Mutex<HashSet<String>>,
    /// Plans queued for loading in order, and the threads working through them.
    queue: Mutex<BackgroundQueue>,
    background: Mutex<Vec<JoinHandle<()>>>,
}

/// A loaded kernel and the dynamic shared memory it is allowed so far: a plan serves every
/// shape of its type (the dimension is an argument), and a later shape may need more than
/// the first one it was loaded for.
struct LoadedKernel {
    kernel: Arc<Kernel>,
    shared: usize,
}

/// Launches take up to this much dynamic shared memory without raising a kernel's limit.
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

impl LoadedKernel {
    /// Allows the kernel `shared` bytes of dynamic shared memory, where that is more than
    /// allowed so far (past the default, by raising its limit).
    fn allow(&mut self, shared: usize) -> Result<()> {
        if shared > self.shared {
            if shared > DEFAULT_SHARED_LIMIT {
                self.kernel.set_max_dynamic_shared_bytes(shared as u32)?;
            }
            self.shared = shared;
        }
        Ok(())
    }
}

/// The ordered background queue of [`KernelSet::prepare_in_background_in_order`].
#[derive(Default)]
struct BackgroundQueue {
    todo: VecDeque<KernelSpec>,
    workers: usize,
}

impl KernelSet {
    pub(crate) fn new(
        cache: KernelCache<ModuleLoader>,
        bundle: Arc<Bundle>,
        target: Target,
    ) -> Self {
        KernelSet {
            cache,
            bundle,
            target,
            loaded: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashSet::new()),
            queue: Mutex::new(BackgroundQueue::default()),
            background: Mutex::new(Vec::new()),
        }
    }

    /// The kernel cache (for its counters).
    pub(crate) fn cache(&self) -> &KernelCache<ModuleLoader> {
        &self.cache
    }

    /// The kernel of plan `plan_name`, loaded once, allowed `shared` bytes of dynamic
    /// shared memory — raised when a later shape asks for more than the kernel was
    /// loaded with (a launch past its limit fails with an invalid-value error).
    pub(crate) fn kernel(
        &self,
        plan_name: &str,
        signature: &[Param],
        shared: usize,
    ) -> Result<Arc<Kernel>> {
        if let Some(k) = self.loaded.lock().get_mut(plan_name) {
            k.allow(shared)?;
            return Ok(Arc::clone(&k.kernel));
        }
        let handle = PlanHandle::new(self.bundle.plan(plan_name, self.target)?);
        let module = self.cache.get_handle(&handle)?;
        let kernel = Arc::new(module.kernel(handle.plan().kernel(), signature)?);
        let mut loaded = self.loaded.lock();
        // Another thread may have loaded the plan meanwhile: the kernel kept is the one
        // handed out, allowed what this call asks too.
        let kept = loaded
            .entry(plan_name.to_string())
            .or_insert_with(|| LoadedKernel { kernel, shared: 0 });
        kept.allow(shared)?;
        Ok(Arc::clone(&kept.kernel))
    }

    /// Whether every kernel of `specs` is loaded.
    pub(crate) fn all_loaded(&self, specs: &[KernelSpec]) -> bool {
        let loaded = self.loaded.lock();
        specs.iter().all(|s| loaded.contains_key(&s.plan))
    }

    /// Loads the kernels of `specs` not loaded yet, the missing ones in parallel, so that
    /// a first search waits for its slowest plan rather than for all of them in turn.
    pub(crate) fn prepare(&self, specs: &[KernelSpec]) -> Result<()> {
        let missing: Vec<&KernelSpec> = {
            let loaded = self.loaded.lock();
            specs
                .iter()
                .filter(|s| !loaded.contains_key(&s.plan))
                .collect()
        };
        // Every missing plan, a single one too: a background preparation of one plan
        // (another tile's scan beside loaded grouping kernels) must not end without it,
        // or auto would keep waiting for a kernel no one loads.
        std::thread::scope(|scope| {
            let jobs: Vec<_> = missing
                .iter()
                .map(|s| scope.spawn(|| self.kernel(&s.plan, s.signature, s.shared).map(|_| ())))
                .collect();
            jobs.into_iter()
                .map(|j| {
                    j.join().unwrap_or_else(|_| {
                        Err(Error::Driver("a kernel-loading thread panicked".into()))
                    })
                })
                .collect::<Result<Vec<()>>>()
        })?;
        Ok(())
    }

    /// Starts loading the kernels of `specs` that are neither loaded nor being loaded on
    /// a background thread, and returns at once. A failure is logged, and a later call
    /// tries again.
    pub(crate) fn prepare_in_background(self: &Arc<Self>, specs: &[KernelSpec]) {
        self.load_in_background(specs);
    }

    /// Queues the kernels of `specs` that are neither loaded nor being loaded for loading
    /// in the background, in the order given after those queued before, by a few threads
    /// ([`in_order_link_workers`]) shared by every such call: what is needed first is
    /// ready first, and the links leave most cores to the build and to a search's own
    /// links (links running at once slow each other down: a first search waits for its
    /// scan's link, not for the list-major kernel queued after it).
    pub(crate) fn prepare_in_background_in_order(self: &Arc<Self>, specs: &[KernelSpec]) {
        let todo = self.claim(specs);
        let mut queue = self.queue.lock();
        queue.todo.extend(todo);
        let want = in_order_link_workers().min(queue.workers + queue.todo.len());
        while queue.workers < want {
            queue.workers += 1;
            let set = Arc::clone(self);
            self.background
                .lock()
                .push(std::thread::spawn(move || set.work_through_queue()));
        }
    }

    /// A queue worker: loads the queued kernels one after another until none is left.
    fn work_through_queue(&self) {
        loop {
            let spec = {
                let mut queue = self.queue.lock();
                match queue.todo.pop_front() {
                    Some(spec) => spec,
                    None => {
                        queue.workers -= 1;
                        return;
                    }
                }
            };
            if let Err(e) = self.prepare(std::slice::from_ref(&spec)) {
                tracing::warn!("loading kernel {} in the background failed: {e}", spec.plan);
            }
            self.pending.lock().remove(&spec.plan);
        }
    }

    /// The kernels of `specs` neither loaded nor being loaded, now marked as being loaded.
    fn claim(&self, specs: &[KernelSpec]) -> Vec<KernelSpec> {
        let loaded = self.loaded.lock();
        let mut pending = self.pending.lock();
        specs
            .iter()
            .filter(|s| !loaded.contains_key(&s.plan) && pending.insert(s.plan.clone()))
            .cloned()
            .collect()
    }

    fn load_in_background(self: &Arc<Self>, specs: &[KernelSpec]) {
        let todo = self.claim(specs);
        if todo.is_empty() {
            return;
        }
        let set = Arc::clone(self);
        let handle = std::thread::spawn(move || {
            if let Err(e) = set.prepare(&todo) {
                tracing::warn!(
                    "loading {} kernels in the background failed: {e}",
                    todo.len()
                );
            }
            let mut pending = set.pending.lock();
            for s in &todo {
                pending.remove(&s.plan);
            }
        });
        self.background.lock().push(handle);
    }

    /// Drops the queued kernels no thread has started on (they load on demand later, if
    /// ever needed).
    pub(crate) fn cancel_queued(&self) {
        let dropped: Vec<KernelSpec> = self.queue.lock().todo.drain(..).collect();
        let mut pending = self.pending.lock();
        for s in &dropped {
            pending.remove(&s.plan);
        }
    }

    /// Waits for the background loads started so far.
    pub(crate) fn wait_for_background(&self) {
        let handles: Vec<_> = self.background.lock().drain(..).collect();
        for h in handles {
            // A panicked loader loaded nothing; the next search loads in the foreground.
            let _ = h.join();
        }
    }
}

/// Links an in-order background preparation runs at once: a quarter of the cores, 1 to 4
/// (one on a 2-core machine, as before; 4 on a 16-core GPU host, where a 0.07 s build of
/// a small index otherwise ends long before its first search's kernels, linked one after
/// another, are ready).
pub(crate) fn in_order_link_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get() / 4)
        .clamp(1, 4)
}
