//! An AQL queue: a ring of 64-byte packets the GPU's packet processor reads in order.
//!
//! Publishing a packet: reserve the next slot (`add_write_index`), wait while the ring
//! is full, write everything but the first 32 bits, store the header and setup word with
//! release ordering (the packet processor starts reading a slot when its type becomes
//! valid), then ring the doorbell with the slot's index. A per-queue lock keeps the
//! doorbell values increasing; queues are shared round-robin by the device's streams, so
//! streams of different queues never contend.

use super::fault::ErrorSlot;
use super::ffi::{packet_header as ph, Agent, HsaStatus, Queue};
use super::hsa::Hsa;
use super::packet::{header_word, BarrierAndPacket, KernelDispatchPacket};
use crate::plugin::foundation::error::{Error, Result};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Packets per queue when `OFFLOAD_AMDGPU_QUEUE_SIZE` does not say (upstream: 1024).
pub const DEFAULT_QUEUE_SIZE: u32 = 1024;
/// Queues per device when `OFFLOAD_AMDGPU_NUM_QUEUES` does not say (upstream: 8).
pub const DEFAULT_QUEUES: u32 = 8;
const PACKET_BYTES: usize = 64;

/// The slot of packet `id` in a ring of `size` packets (a power of two).
pub fn slot_index(id: u64, size: u32) -> usize {
    (id & (u64::from(size) - 1)) as usize
}

/// Whether packet `id` may be written: the ring holds `size` packets not yet read.
pub fn has_room(id: u64, read_index: u64, size: u32) -> bool {
    id.wrapping_sub(read_index) < u64::from(size)
}

/// The ring size to ask for: `wanted` rounded up to a power of two, within the agent's
/// maximum (itself a power of two per HSA).
pub fn ring_size(wanted: u32, agent_max: u32) -> u32 {
    let max = if agent_max == 0 {
        DEFAULT_QUEUE_SIZE
    } else {
        agent_max
    };
    wanted
        .max(2)
        .checked_next_power_of_two()
        .unwrap_or(max)
        .min(max)
}

/// How many queues a device gets: `wanted`, at least one, at most the agent's maximum.
pub fn queue_count(wanted: u32, agent_max: u32) -> u32 {
    wanted.max(1).min(agent_max.max(1))
}

/// The header with the barrier bit (the packet waits for every earlier packet of the
/// queue: a stream's operations run in order) and system-scope fences (host and other
/// agents see what it wrote, it sees what they wrote before).
pub fn ordered_header(header: u16) -> u16 {
    let scope_mask = (3 << ph::SHIFT_ACQUIRE_FENCE_SCOPE) | (3 << ph::SHIFT_RELEASE_FENCE_SCOPE);
    (header & !scope_mask)
        | (1 << ph::SHIFT_BARRIER)
        | (ph::FENCE_SCOPE_SYSTEM << ph::SHIFT_ACQUIRE_FENCE_SCOPE)
        | (ph::FENCE_SCOPE_SYSTEM << ph::SHIFT_RELEASE_FENCE_SCOPE)
}

pub struct AqlQueue {
    hsa: Arc<Hsa>,
    queue: *mut Queue,
    size: u32,
    base: usize,
    doorbell: super::ffi::Signal,
    /// The runtime's error callback is given its address; it lives as long as the queue.
    errors: Arc<ErrorSlot>,
    publish: Mutex<()>,
}

// SAFETY: the queue pointer is the runtime's, valid until destroyed in Drop; the runtime
// allows any thread to submit to a MULTI queue, and submission is serialised by `publish`.
unsafe impl Send for AqlQueue {}
// SAFETY: as above.
unsafe impl Sync for AqlQueue {}

unsafe extern "C" fn on_queue_error(status: HsaStatus, _queue: *mut Queue, data: *mut c_void) {
    // SAFETY: `data` is the `ErrorSlot` the `AqlQueue` holds, which outlives the queue.
    let slot = unsafe { &*(data as *const ErrorSlot) };
    slot.record(Error::backend_failure(format!(
        "the GPU's packet processor stopped the queue: HSA status 0x{status:x}"
    )));
}

impl AqlQueue {
    /// The runtime's `hsa_queue_t *`.
    pub fn raw(&self) -> *mut Queue {
        self.queue
    }

    pub fn create(hsa: Arc<Hsa>, agent: Agent, size: u32) -> Result<AqlQueue> {
        let errors = Arc::new(ErrorSlot::default());
        let data = Arc::as_ptr(&errors) as *mut c_void;
        // SAFETY: `on_queue_error` reads `data` as the `ErrorSlot`, which `errors` keeps
        // alive until Drop has destroyed the queue.
        let queue = unsafe { hsa.queue_create(agent, size, on_queue_error, data) }?;
        // SAFETY: hsa_queue_create returned a valid queue.
        let (base, doorbell, size) = unsafe {
            (
                (*queue).base_address as usize,
                (*queue).doorbell_signal,
                (*queue).size,
            )
        };
        // Timestamps for events' elapsed time; without them timing is refused, the rest works.
        // SAFETY: a valid queue.
        let s = unsafe { (hsa.f.profiling_set_profiler_enabled)(queue, 1) };
        let _ = hsa.check(s, "hsa_amd_profiling_set_profiler_enabled");
        Ok(AqlQueue {
            hsa,
            queue,
            size,
            base,
            doorbell,
            errors,
            publish: Mutex::new(()),
        })
    }

    /// The error that stopped the queue, if one did.
    pub fn error(&self) -> Option<Error> {
        self.errors.get()
    }

    pub fn submit_dispatch(&self, packet: &KernelDispatchPacket) -> Result<()> {
        let word = header_word(ordered_header(packet.header), packet.setup);
        self.submit(packet as *const KernelDispatchPacket as *const u8, word)
    }

    pub fn submit_barrier(&self, packet: &BarrierAndPacket) -> Result<()> {
        let word = header_word(ordered_header(packet.header), packet.reserved0);
        self.submit(packet as *const BarrierAndPacket as *const u8, word)
    }

    fn submit(&self, packet: *const u8, word: u32) -> Result<()> {
        if let Some(e) = self.error() {
            return Err(e.context("the queue cannot take more work"));
        }
        let _order = self.publish.lock();
        // SAFETY: a valid queue.
        let id = unsafe { (self.hsa.f.queue_add_write_index_relaxed)(self.queue, 1) };
        loop {
            // SAFETY: a valid queue.
            let read = unsafe { (self.hsa.f.queue_load_read_index_scacquire)(self.queue) };
            if has_room(id, read, self.size) {
                break;
            }
            if let Some(e) = self.error() {
                return Err(e.context("the queue stopped while full"));
            }
            std::thread::yield_now();
        }
        let slot = self.base + slot_index(id, self.size) * PACKET_BYTES;
        // SAFETY: `slot` is a 64-byte, 64-aligned packet of the ring that the packet
        // processor has consumed (room was checked); its header still says INVALID, so
        // the GPU does not read the body while it is written. The header word is
        // published last with release ordering through an atomic of the same address.
        unsafe {
            std::ptr::copy_nonoverlapping(packet.add(4), (slot + 4) as *mut u8, PACKET_BYTES - 4);
            (*(slot as *const AtomicU32)).store(word, Ordering::Release);
        }
        self.hsa.signal_store_relaxed(self.doorbell, id as i64);
        Ok(())
    }
}

impl Drop for AqlQueue {
    fn drop(&mut self) {
        // SAFETY: the queue is ours; the device drops its queues after every stream.
        let _ = unsafe { (self.hsa.f.queue_destroy)(self.queue) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_indexing_wraps() {
        assert_eq!(slot_index(0, 1024), 0);
        assert_eq!(slot_index(1023, 1024), 1023);
        assert_eq!(slot_index(1024, 1024), 0);
        assert_eq!(slot_index(u64::MAX, 1024), 1023);
        assert!(has_room(5, 0, 8));
        assert!(has_room(7, 0, 8));
        assert!(!has_room(8, 0, 8), "8 unread packets fill a ring of 8");
        assert!(has_room(8, 1, 8));
        assert!(has_room(3, u64::MAX - 1, 8), "indices wrap around 2^64");
    }

    #[test]
    fn sizes_and_counts_follow_the_agent() {
        assert_eq!(ring_size(1024, 131072), 1024);
        assert_eq!(ring_size(1000, 131072), 1024);
        assert_eq!(ring_size(4096, 1024), 1024);
        assert_eq!(ring_size(0, 64), 2);
        assert_eq!(ring_size(100, 0), 128);
        assert_eq!(queue_count(8, 128), 8);
        assert_eq!(queue_count(8, 4), 4);
        assert_eq!(queue_count(0, 4), 1);
        assert_eq!(queue_count(3, 0), 1);
    }

    #[test]
    fn headers_are_ordered_with_system_scope() {
        let dispatch = ph::TYPE_KERNEL_DISPATCH;
        let h = ordered_header(dispatch | (ph::FENCE_SCOPE_AGENT << ph::SHIFT_RELEASE_FENCE_SCOPE));
        assert_eq!(h & 0xff, dispatch);
        assert_eq!((h >> ph::SHIFT_BARRIER) & 1, 1);
        assert_eq!(
            (h >> ph::SHIFT_ACQUIRE_FENCE_SCOPE) & 3,
            ph::FENCE_SCOPE_SYSTEM
        );
        assert_eq!(
            (h >> ph::SHIFT_RELEASE_FENCE_SCOPE) & 3,
            ph::FENCE_SCOPE_SYSTEM
        );
        assert_eq!(h, 0x1502);
    }
}
