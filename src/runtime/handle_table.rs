//! Tables of live objects, so a destroyed or made-up handle is an error, not undefined
//! behaviour. A handle's value is a number drawn from one process-wide counter, never
//! reused (not the object's address, which the allocator may hand out again), so a
//! stale handle can never name a newer object, even across olShutDown and olInit.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Handle values start high and step by 16, so they look like aligned pointers in traces
/// and never collide with small integers passed by mistake.
const FIRST_HANDLE: usize = 0x0ff1_0000;
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(FIRST_HANDLE);

/// A handle value no other object of this process has had.
pub fn new_handle() -> usize {
    NEXT_HANDLE.fetch_add(16, Ordering::Relaxed)
}

pub struct HandleTable<T> {
    live: RwLock<HashMap<usize, Arc<T>>>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        HandleTable {
            live: RwLock::new(HashMap::new()),
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
        self.live.write().remove(&handle)
    }

    /// Every live object, for shutdown.
    pub fn drain(&self) -> Vec<Arc<T>> {
        self.live.write().drain().map(|(_, v)| v).collect()
    }

    pub fn len(&self) -> usize {
        self.live.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
