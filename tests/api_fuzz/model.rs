//! What the fuzzer believes: every object an input made, live or destroyed, and the bytes
//! each allocation and host buffer must hold once the work queued on them is done.

use offload::capi::*;

/// Where the last queued work on an object is, so that a reader waits for it first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pending {
    None,
    Queue(usize),
    /// A queue destroyed with work in it: an event recorded just before stands for it.
    Event(ol_event_handle_t),
}

pub struct Alloc {
    pub ptr: usize,
    pub size: usize,
    pub kind: u32,
    /// Modelled bytes (`None`: too large to model; only freed).
    pub bytes: Option<Vec<u8>>,
    pub live: bool,
    pub pending: Pending,
    /// Queued work that a kernel does, which must end before the memory is freed.
    pub kernel_pending: bool,
}

/// Plain host memory (pageable, named by the host device).
pub struct HostBuf {
    pub mem: Vec<u8>,
    pub model: Vec<u8>,
    pub pending: Pending,
}

pub struct Queue {
    pub handle: ol_queue_handle_t,
    pub live: bool,
    /// Work was queued since the queue was last waited for.
    pub busy: bool,
}

pub struct Event {
    pub handle: ol_event_handle_t,
    pub live: bool,
}

pub struct Program {
    pub handle: ol_program_handle_t,
    pub live: bool,
    pub add: ol_symbol_handle_t,
}

/// A byte range of an allocation or a host buffer.
#[derive(Clone, Copy, Debug)]
pub enum Place {
    Alloc(usize, usize),
    Host(usize, usize),
}

#[derive(Default)]
pub struct Model {
    pub allocs: Vec<Alloc>,
    pub hosts: Vec<HostBuf>,
    pub queues: Vec<Queue>,
    pub events: Vec<Event>,
    pub programs: Vec<Program>,
    /// Host functions queued, and the counter they bump.
    pub host_calls_expected: u64,
    /// Events standing for the work of destroyed queues, not yet waited for.
    pub orphans: Vec<ol_event_handle_t>,
}

pub const MAX_ALLOCS: usize = 8;
pub const MAX_HOSTS: usize = 4;
pub const MAX_QUEUES: usize = 4;
pub const MAX_EVENTS: usize = 8;
pub const MAX_PROGRAMS: usize = 3;

impl Model {
    /// The modelled bytes of `place` (`n` of them), if modelled.
    pub fn read(&self, place: Place, n: usize) -> Option<Vec<u8>> {
        match place {
            Place::Alloc(i, off) => self.allocs[i]
                .bytes
                .as_ref()
                .map(|b| b[off..off + n].to_vec()),
            Place::Host(i, off) => Some(self.hosts[i].model[off..off + n].to_vec()),
        }
    }

    /// Writes modelled bytes (a no-op where the allocation is not modelled).
    pub fn write(&mut self, place: Place, data: &[u8]) {
        match place {
            Place::Alloc(i, off) => {
                if let Some(b) = self.allocs[i].bytes.as_mut() {
                    b[off..off + data.len()].copy_from_slice(data);
                }
            }
            Place::Host(i, off) => self.hosts[i].model[off..off + data.len()].copy_from_slice(data),
        }
    }

    pub fn pending(&self, place: Place) -> Pending {
        match place {
            Place::Alloc(i, _) => self.allocs[i].pending,
            Place::Host(i, _) => self.hosts[i].pending,
        }
    }

    pub fn set_pending(&mut self, place: Place, pending: Pending) {
        match place {
            Place::Alloc(i, _) => self.allocs[i].pending = pending,
            Place::Host(i, _) => self.hosts[i].pending = pending,
        }
    }

    /// Marks every object waiting on `pending` as done.
    pub fn settled(&mut self, pending: Pending) {
        match pending {
            Pending::Queue(q) => self.queues[q].busy = false,
            Pending::Event(e) => self.orphans.retain(|&o| o != e),
            Pending::None => {}
        }
        for a in &mut self.allocs {
            if a.pending == pending {
                a.pending = Pending::None;
                a.kernel_pending = false;
            }
        }
        for h in &mut self.hosts {
            if h.pending == pending {
                h.pending = Pending::None;
            }
        }
    }

    pub fn live_queues(&self) -> Vec<usize> {
        (0..self.queues.len())
            .filter(|&i| self.queues[i].live)
            .collect()
    }

    pub fn live_allocs(&self) -> Vec<usize> {
        (0..self.allocs.len())
            .filter(|&i| self.allocs[i].live)
            .collect()
    }
}
