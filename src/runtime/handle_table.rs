//! Tables of live objects, so a destroyed or made-up handle is an error, not undefined
//! behaviour. A handle is the address of the object it names; the table maps addresses of
//! live objects to the objects, and the C layer only ever uses the object it gets back.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Makes `object` live and returns its handle value.
    pub fn insert(&self, object: Arc<T>) -> usize {
        let handle = Arc::as_ptr(&object) as usize;
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
