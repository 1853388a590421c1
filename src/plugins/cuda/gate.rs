//! Gates: a queue's later work waits for a 32-bit word of pinned host memory that a
//! thread of ours sets (`cuStreamWaitValue32_v2`), so a wait on another backend's event
//! holds the stream on the GPU, not the driver's callback thread. The driver runs every
//! stream's host functions on that one thread; a host function blocked in another
//! backend's wait could keep a host function it depends on from ever running.
//!
//! A queue takes its words from one pinned page of its own; a word is reused once the
//! queue has synchronized (its stream is past every gate opened before).

use super::context::PrimaryContext;
use super::ffi::CuStream;
use crate::plugin::foundation::error::Result;
use crate::plugin::foundation::flags::trace;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Words in a queue's page.
const WORDS: usize = 1024;

#[derive(Default)]
pub struct Gates {
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    /// The pinned page (allocated at the first gate), and how many words are in use
    /// since the last synchronize.
    page: Option<usize>,
    used: usize,
    /// The driver cannot wait on a word: waits are bridged on a host thread instead.
    unsupported: bool,
}

/// Opens one gate.
pub struct Opener(usize);

impl Opener {
    pub fn open(self) {
        // SAFETY: a word of a pinned page that lives as long as its queue's context: the
        // page is freed only once the queue is gone and its stream past every gate.
        let word = unsafe { &*(self.0 as *const AtomicU32) };
        word.store(1, Ordering::Release);
    }
}

impl Gates {
    /// Enqueues on `stream` a wait for a fresh word; `None` where the driver cannot (the
    /// caller bridges the wait another way).
    pub fn close(&self, context: &PrimaryContext, stream: CuStream) -> Result<Option<Opener>> {
        let mut state = self.state.lock();
        if state.unsupported || state.used == WORDS {
            return Ok(None);
        }
        let page = match state.page {
            Some(page) => page,
            None => {
                let page = context.driver().mem_alloc_host(WORDS * 4)?;
                state.page = Some(page);
                page
            }
        };
        let word = page + state.used * 4;
        // SAFETY: a word of the pinned page above, not used by any gate now.
        unsafe { &*(word as *const AtomicU32) }.store(0, Ordering::Release);
        match context.driver().stream_wait_value32(stream, word, 1) {
            Some(Ok(())) => {
                state.used += 1;
                Ok(Some(Opener(word)))
            }
            Some(Err(e)) => {
                trace(|| {
                    format!("CUDA: cuStreamWaitValue32_v2 refused ({e}); waits on other backends' events run on the driver's callback thread")
                });
                state.unsupported = true;
                Ok(None)
            }
            None => {
                state.unsupported = true;
                Ok(None)
            }
        }
    }

    /// Words in use now (before a synchronize).
    pub fn in_use(&self) -> usize {
        self.state.lock().used
    }

    /// The stream synchronized, so it is past the `before` gates closed until then:
    /// their words may be used again unless more were closed meanwhile.
    pub fn passed(&self, before: usize) {
        let mut state = self.state.lock();
        if state.used == before {
            state.used = 0;
        }
    }

    /// Frees the page when no gate has been closed since the stream last synchronized;
    /// otherwise a gate may still be waited on (or be opened), and the page is left.
    pub fn free(&self, context: &PrimaryContext) {
        let mut state = self.state.lock();
        if state.used > 0 {
            trace(|| "CUDA: a queue dropped with unsynchronized gates keeps its page".into());
            return;
        }
        if let Some(page) = state.page.take() {
            let _ = context.driver().mem_free_host(page);
        }
    }
}
