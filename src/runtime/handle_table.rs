//! Tables of live objects, so a destroyed or made-up handle is an error, not undefined
//! behaviour. A handle's value is a number drawn from one process-wide counter, never
//! reused (not the object's address, which the allocator may hand out again), so a
//! stale handle can never name a newer object, even across olShutDown and olInit.

use crate::plugin::foundation::int_hash::IntMap;
use crate::runtime::thread_copy::{with_thread_copy, ThreadCopy};
use parking_lot::RwLock;
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Handle values start high and step by 16, so they look like aligned pointers in traces
/// and never collide with small integers passed by mistake.
const FIRST_HANDLE: usize = 0x0ff1_0000;
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(FIRST_HANDLE);

/// A handle value no other object of this process has had.
pub fn new_handle() -> usize {
    NEXT_HANDLE.fetch_add(16, Ordering::Relaxed)
}

/// Bumped whenever any handle of any table ends, so per-thread caches of live objects
/// know to forget what they hold.
static REMOVALS: AtomicU64 = AtomicU64::new(0);

/// Entries of a thread's cache of recently used objects, indexed by handle.
const CACHE_SLOTS: usize = 8;

type CachedObject = Option<(usize, Arc<dyn Any + Send + Sync>)>;

thread_local! {
    /// A thread's recently used live objects, valid while `REMOVALS` has not moved.
    static CACHE: ThreadCopy<[CachedObject; CACHE_SLOTS]> = const {
        RefCell::new((u64::MAX, [const { None }; CACHE_SLOTS]))
    };
}

/// Drops this thread's cached references at once (other threads drop theirs at their next
/// lookup), so the thread that destroys an object does not keep it alive: a destroyed
/// program is unloaded as soon as its last kernel is done.
fn forget_cached_on_this_thread() {
    // Past thread-local destruction (an exit handler) there is nothing cached to forget.
    let _ = CACHE.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            cache.1 = [const { None }; CACHE_SLOTS];
        }
    });
}

pub struct HandleTable<T> {
    live: RwLock<IntMap<usize, Arc<T>>>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        HandleTable {
            live: RwLock::new(IntMap::default()),
        }
    }
}

impl<T> HandleTable<T> {
    /// Makes `object` live and returns its new handle value.
    pub fn insert(&self, object: Arc<T>) -> usize {
        let handle = new_handle();
        self.live.write().insert(handle, object);
        handle
    }

    pub fn get(&self, handle: usize) -> Option<Arc<T>> {
        self.live.read().get(&handle).cloned()
    }

    /// Ends the handle's life; the object lives on while others hold it.
    pub fn remove(&self, handle: usize) -> Option<Arc<T>> {
        let removed = self.live.write().remove(&handle);
        REMOVALS.fetch_add(1, Ordering::Release);
        forget_cached_on_this_thread();
        removed
    }

    /// Every live object, for shutdown.
    pub fn drain(&self) -> Vec<Arc<T>> {
        let all = self.live.write().drain().map(|(_, v)| v).collect();
        REMOVALS.fetch_add(1, Ordering::Release);
        forget_cached_on_this_thread();
        all
    }

    pub fn len(&self) -> usize {
        self.live.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Send + Sync + 'static> HandleTable<T> {
    /// Runs `f` with the live object `handle` names, or answers `None`. Hot calls use it:
    /// a thread's recently used objects are kept in a per-thread cache that is checked
    /// against one shared counter, so threads using the same object write no shared
    /// cache line (no lock word, no shared reference count: the cache holds the table's
    /// `Arc` inside one of its own, which only this thread counts). The cache is let go
    /// before `f` runs, so a lookup inside `f` (a queue's, then its kernel's) is served
    /// from it too.
    pub fn with_live<R>(&self, handle: usize, f: impl FnOnce(&Arc<T>) -> R) -> Option<R> {
        let slot = (handle >> 4) % CACHE_SLOTS;
        // Only the hit is inline: the rest is out of line, so that the code a warm call
        // runs is short (the driver's own calls evict it between ours).
        let cached = with_thread_copy(
            &CACHE,
            &REMOVALS,
            (),
            forget_all,
            |slots, ()| match &slots[slot] {
                Some((h, object)) if *h == handle && object.is::<Arc<T>>() => Some(object.clone()),
                _ => self.cache(handle, &mut slots[slot]),
            },
            |()| self.uncached(handle),
        )?;
        // The cache holds the table's own `Arc`, so callers get `&Arc<T>`.
        cached.downcast_ref::<Arc<T>>().map(f)
    }

    /// A lookup that missed the thread's cache: the table's object, kept in `slot`.
    #[cold]
    #[inline(never)]
    fn cache(&self, handle: usize, slot: &mut CachedObject) -> Option<Arc<dyn Any + Send + Sync>> {
        let object: Arc<dyn Any + Send + Sync> = Arc::new(self.get(handle)?);
        *slot = Some((handle, object.clone()));
        Some(object)
    }

    /// A lookup without the cache (it is in use by an outer call, or gone).
    #[cold]
    #[inline(never)]
    fn uncached(&self, handle: usize) -> Option<Arc<dyn Any + Send + Sync>> {
        self.get(handle)
            .map(|o| Arc::new(o) as Arc<dyn Any + Send + Sync>)
    }
}

/// Empties a thread's cache that some removal made stale.
#[cold]
#[inline(never)]
fn forget_all(slots: &mut [CachedObject; CACHE_SLOTS]) {
    *slots = [const { None }; CACHE_SLOTS];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_lookups_see_removals() {
        let table = HandleTable::default();
        let a = table.insert(Arc::new(String::from("a")));
        assert_eq!(table.with_live(a, |s| s.to_string()).as_deref(), Some("a"));
        assert_eq!(table.with_live(a, |s| s.len()), Some(1));
        table.remove(a);
        assert_eq!(table.with_live(a, |s| s.len()), None);
        // A handle of another table (another type) is not found here.
        let other = HandleTable::default();
        let b = other.insert(Arc::new(7u32));
        assert_eq!(other.with_live(b, |v| **v), Some(7));
        assert_eq!(table.with_live(b, |s| s.len()), None);
    }

    #[test]
    fn handles_are_never_reused() {
        let table = HandleTable::default();
        let a = table.insert(Arc::new(1));
        table.remove(a);
        let b = table.insert(Arc::new(2));
        assert_ne!(a, b);
        assert!(table.get(a).is_none());
        assert_eq!(*table.get(b).unwrap(), 2);
    }
}
