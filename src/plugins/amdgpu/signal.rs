//! HSA signals, pooled: a completion signal per stream operation would otherwise cost a
//! kernel-driver call to create and one to destroy. A taken signal is set to 1 (pending);
//! the packet processor, a copy engine or a host step brings it to 0 (done). A signal
//! returns to the pool when its last holder drops it, which the stream does only after
//! seeing it done, so no packet still refers to a reused signal.

use super::ffi::Signal;
use super::hsa::Hsa;
use super::recycler::Recycler;
use crate::plugin::foundation::error::Result;
use std::sync::Arc;

/// Signals kept for reuse per device (upstream starts with 64; we keep what was used).
const KEEP: usize = 1024;

pub struct SignalPool {
    hsa: Arc<Hsa>,
    free: Recycler<Signal>,
}

impl SignalPool {
    pub fn new(hsa: Arc<Hsa>) -> Arc<SignalPool> {
        Arc::new(SignalPool {
            hsa,
            free: Recycler::new(KEEP),
        })
    }

    /// A signal with value 1.
    pub fn take(self: &Arc<Self>) -> Result<Arc<PooledSignal>> {
        let signal = match self.free.take() {
            Some(s) => {
                self.hsa.signal_store_relaxed(s, 1);
                s
            }
            None => self.hsa.signal_create(1)?,
        };
        Ok(Arc::new(PooledSignal {
            signal,
            pool: self.clone(),
        }))
    }
}

impl Drop for SignalPool {
    fn drop(&mut self) {
        for s in self.free.drain() {
            self.hsa.signal_destroy(s);
        }
    }
}

pub struct PooledSignal {
    signal: Signal,
    pool: Arc<SignalPool>,
}

impl PooledSignal {
    pub fn handle(&self) -> Signal {
        self.signal
    }

    pub fn hsa(&self) -> &Arc<Hsa> {
        &self.pool.hsa
    }

    pub fn is_done(&self) -> bool {
        self.pool.hsa.signal_load(self.signal) <= 0
    }

    /// Marks the signal done (for work the host completes).
    pub fn complete(&self) {
        self.pool.hsa.signal_store_release(self.signal, 0);
    }

    /// Waits up to about `timeout_ns`; whether it is done.
    pub fn wait(&self, timeout_ns: u64) -> bool {
        self.pool.hsa.signal_wait_below(self.signal, 1, timeout_ns) <= 0
    }
}

impl Drop for PooledSignal {
    fn drop(&mut self) {
        if let Some(extra) = self.pool.free.put(self.signal) {
            self.pool.hsa.signal_destroy(extra);
        }
    }
}
