//! Running independent jobs (links, compilations) on all cores.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// The number of threads for `jobs` (0 = one per core), never more than `items`.
pub fn threads(jobs: usize, items: usize) -> usize {
    let n = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    };
    n.min(items).max(1)
}

/// Applies `f` to every item on `jobs` threads (0 = one per core); results come back in
/// input order.
pub fn map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads(jobs, items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                slots.lock()[i] = Some(r);
            });
        }
    });
    slots.into_inner().into_iter().flatten().collect()
}

/// Like [`map`] for fallible jobs: the first error stops further jobs from starting and
/// is returned.
pub fn try_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let failed = AtomicBool::new(false);
    let first: Mutex<Option<Error>> = Mutex::new(None);
    let results = map(items, jobs, |item| {
        if failed.load(Ordering::Relaxed) {
            return None;
        }
        match f(item) {
            Ok(r) => Some(r),
            Err(e) => {
                failed.store(true, Ordering::Relaxed);
                first.lock().get_or_insert(e);
                None
            }
        }
    });
    if let Some(e) = first.into_inner() {
        return Err(e);
    }
    Ok(results.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_stops_on_error() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(
            map(&items, 4, |x| x * 2),
            items.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        let err = try_map(&items, 3, |&x| {
            if x == 17 {
                Err(Error::InvalidArgument("17".into()))
            } else {
                Ok(x)
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("17"));
        assert_eq!(try_map(&items, 0, |&x| Ok(x + 1)).unwrap().len(), 100);
    }
}
