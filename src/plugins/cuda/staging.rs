//! Queued copies between pageable host memory and a GPU, staged through pinned buffers of
//! the queue's own so that enqueueing never waits.
//!
//! `cuMemcpyAsync` with pageable host memory is synchronous with the stream ("for
//! transfers from pageable host memory to device memory, a stream sync is performed
//! before the copy is initiated"; device to pageable host memory "returns only once the
//! copy has completed"): a queued `olMemcpy` would block the caller behind the queue's
//! earlier work. Here the copy goes in chunks through two pinned buffers, alternately:
//! on the stream, each chunk is a gate (`gate.rs`), a DMA between the buffer and the
//! device, and an ordering-only event; a staging thread of the queue's copies between the
//! buffer and the pageable memory and opens the gates, so the CPU copies of one chunk
//! overlap the DMA of the other. The caller only enqueues.
//!
//! To the device: the thread waits until the stream reaches the copy (earlier work may
//! write the source) and until a buffer's last DMA is done, fills it, and opens its
//! chunk's gate. To the host: chunk i's gate opens once its buffer is drained of chunk
//! i - 2; the thread copies each chunk out after its DMA and opens a last gate that holds
//! the stream's later work until the destination is written.

use super::context::PrimaryContext;
use super::event::{CudaEvent, Timing};
use super::ffi::CuStream;
use super::gate::{Gates, Opener};
use crate::plugin::device_stream::HostErrors;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::flags::trace;
use crate::plugin::foundation::parallel::copy_for_dma;
use crate::plugin::StreamEvent;
use crate::plugin::{keep_first_failure, CopyDirection};
use parking_lot::Mutex;
use std::sync::Arc;

/// Bytes of each pinned buffer (and of each chunk).
const CHUNK: usize = 4 << 20;

/// A queue's staging: its two pinned buffers and its staging thread.
pub struct Staging {
    context: Arc<PrimaryContext>,
    state: Mutex<State>,
    errors: HostErrors,
}

#[derive(Default)]
struct State {
    /// The pinned buffers, allocated at the first staged copy.
    buffers: Option<[usize; 2]>,
    /// The buffer the next chunk takes.
    next: usize,
    /// Per buffer, the event after its last DMA to the device (the buffer is free for
    /// filling once it completes); `None` when no such DMA is pending.
    free_after: [Option<Arc<CudaEvent>>; 2],
    thread: Option<crossbeam_channel::Sender<Job>>,
}

/// One staged copy as it is enqueued.
struct ChunkPlan<'a> {
    stream: CuStream,
    gates: &'a Gates,
    buffers: [usize; 2],
    dst: usize,
    src: usize,
    size: usize,
}

impl ChunkPlan<'_> {
    /// The copy's chunks, `(offset, len)`, each at most one buffer.
    fn chunks(&self) -> impl Iterator<Item = (usize, usize)> {
        let size = self.size;
        (0..size)
            .step_by(CHUNK)
            .map(move |offset| (offset, CHUNK.min(size - offset)))
    }
}

/// What the staging thread does for one copy, in the stream's order.
enum Job {
    ToDevice {
        /// The stream reached the copy.
        start: Arc<CudaEvent>,
        src: usize,
        chunks: Vec<FillChunk>,
    },
    ToHost {
        dst: usize,
        chunks: Vec<DrainChunk>,
        /// Opens the gate after the copy, once `dst` is written.
        end: Opener,
    },
}

struct FillChunk {
    offset: usize,
    len: usize,
    buffer: usize,
    /// The buffer's previous DMA to the device, to wait for before filling it.
    free_after: Option<Arc<CudaEvent>>,
    gate: Opener,
}

struct DrainChunk {
    offset: usize,
    len: usize,
    buffer: usize,
    /// The DMA into the buffer.
    done: Arc<CudaEvent>,
    /// Opens the gate of the chunk that reuses this buffer next (its first use: none).
    releases: Option<Opener>,
}

impl State {
    /// The buffer the next chunk takes (the two alternate).
    fn take_turn(&mut self) -> usize {
        let which = self.next;
        self.next ^= 1;
        which
    }
}

impl Staging {
    pub fn new(context: Arc<PrimaryContext>, errors: HostErrors) -> Staging {
        Staging {
            context,
            state: Mutex::new(State::default()),
            errors,
        }
    }

    /// Whether `addr` is pageable host memory (memory the driver does not know).
    fn is_pageable(&self, addr: usize) -> bool {
        !self.context.driver().knows_pointer(addr as u64)
    }

    /// Enqueues a copy on `stream` (the context is current) through the buffers where
    /// its host side is pageable memory; `Ok(false)` where it is not, or where it cannot
    /// be staged (no gates): the caller copies directly.
    pub fn copy(
        &self,
        stream: CuStream,
        gates: &Gates,
        (dst, src, size): (usize, usize, usize),
        direction: CopyDirection,
    ) -> Result<bool> {
        let to_device = match direction {
            CopyDirection::HostToDevice if self.is_pageable(src) => true,
            CopyDirection::DeviceToHost if self.is_pageable(dst) => false,
            _ => return Ok(false),
        };
        let mut state = self.state.lock();
        let buffers = self.buffers(&mut state)?;
        let chunks = ChunkPlan {
            stream,
            gates,
            buffers,
            dst,
            src,
            size,
        };
        if to_device {
            self.to_device(&mut state, chunks)
        } else {
            self.to_host(&mut state, chunks)
        }
    }

    /// From pageable `src` to device `dst`.
    fn to_device(&self, state: &mut State, plan: ChunkPlan<'_>) -> Result<bool> {
        let start = self.mark(plan.stream)?;
        let mut chunks = Vec::new();
        for (offset, len) in plan.chunks() {
            let Some(gate) = plan.gates.close(&self.context, plan.stream)? else {
                return self.abandon(chunks.into_iter().map(|c: FillChunk| c.gate));
            };
            let which = state.take_turn();
            let buffer = plan.buffers[which];
            let done = self.dma(plan.stream, plan.dst + offset, buffer, len)?;
            let free_after = state.free_after[which].replace(done);
            chunks.push(FillChunk {
                offset,
                len,
                buffer,
                free_after,
                gate,
            });
        }
        let src = plan.src;
        self.send(state, Job::ToDevice { start, src, chunks })?;
        Ok(true)
    }

    /// From device `src` to pageable `dst`.
    fn to_host(&self, state: &mut State, plan: ChunkPlan<'_>) -> Result<bool> {
        let (stream, gates) = (plan.stream, plan.gates);
        let mut chunks: Vec<DrainChunk> = Vec::new();
        for (i, (offset, len)) in plan.chunks().enumerate() {
            let which = state.take_turn();
            // A buffer still being filled for an earlier copy to the device.
            if let Some(previous) = state.free_after[which].take() {
                let driver = self.context.driver();
                driver.stream_wait_event(stream, previous.handle())?;
            }
            // From the third chunk on, the buffer must first be drained of chunk i - 2.
            if i >= 2 {
                let Some(gate) = gates.close(&self.context, stream)? else {
                    return self.abandon(chunks.into_iter().filter_map(|c| c.releases));
                };
                chunks[i - 2].releases = Some(gate);
            }
            let buffer = plan.buffers[which];
            let done = self.dma(stream, buffer, plan.src + offset, len)?;
            chunks.push(DrainChunk {
                offset,
                len,
                buffer,
                done,
                releases: None,
            });
        }
        let Some(end) = gates.close(&self.context, stream)? else {
            let pending = chunks.into_iter().filter_map(|c| c.releases);
            return self.abandon(pending);
        };
        self.send(
            state,
            Job::ToHost {
                dst: plan.dst,
                chunks,
                end,
            },
        )?;
        Ok(true)
    }

    /// Enqueues one chunk's DMA on `stream` and returns the event after it.
    fn dma(&self, stream: CuStream, dst: usize, src: usize, len: usize) -> Result<Arc<CudaEvent>> {
        self.context.driver().memcpy_async(dst, src, len, stream)?;
        self.mark(stream)
    }

    /// An event at this point of `stream`, for ordering only.
    fn mark(&self, stream: CuStream) -> Result<Arc<CudaEvent>> {
        let event = CudaEvent::record(&self.context, stream, Timing::Untimed)?;
        Ok(Arc::new(event))
    }

    /// Gates already closed on the stream for a copy that cannot go on: opened, so the
    /// stream is not held; the copy is then made directly (`Ok(false)`).
    fn abandon(&self, gates: impl Iterator<Item = Opener>) -> Result<bool> {
        gates.for_each(Opener::open);
        Ok(false)
    }

    fn buffers(&self, state: &mut State) -> Result<[usize; 2]> {
        if let Some(buffers) = state.buffers {
            return Ok(buffers);
        }
        let driver = self.context.driver();
        let first = driver.mem_alloc_host(CHUNK)?;
        let second = driver.mem_alloc_host(CHUNK).inspect_err(|_| {
            let _ = driver.mem_free_host(first);
        })?;
        state.buffers = Some([first, second]);
        Ok([first, second])
    }

    fn send(&self, state: &mut State, job: Job) -> Result<()> {
        if state.thread.is_none() {
            let (send, receive) = crossbeam_channel::unbounded::<Job>();
            let errors = self.errors.clone();
            std::thread::Builder::new()
                .name("offload-cuda-staging".into())
                .spawn(move || receive.into_iter().for_each(|job| run(job, &errors)))
                .map_err(|e| Error::out_of_resources(format!("a staging thread: {e}")))?;
            state.thread = Some(send);
        }
        let thread = state.thread.as_ref().expect("started above");
        thread
            .send(job)
            .map_err(|_| Error::unknown("the queue's staging thread is gone"))
    }

    /// The queue is gone: frees the buffers if its stream is idle (no DMA and no job
    /// of the staging thread can touch them any more), else leaves them.
    pub fn free(&self, stream_idle: bool) {
        let mut state = self.state.lock();
        state.thread = None; // the thread ends after its last job
        if !stream_idle {
            if state.buffers.is_some() {
                trace(|| "CUDA: a queue dropped while busy keeps its staging buffers".into());
            }
            return;
        }
        if let Some(buffers) = state.buffers.take() {
            for buffer in buffers {
                let _ = self.context.driver().mem_free_host(buffer);
            }
        }
    }
}

/// One job on the staging thread. A failed wait (the device faulted) is kept for the
/// queue's next sync; gates are opened whatever happens, so the stream is never held.
fn run(job: Job, errors: &HostErrors) {
    match job {
        Job::ToDevice { start, src, chunks } => {
            let mut ok = wait(&start, errors);
            for chunk in chunks {
                if ok {
                    if let Some(free) = &chunk.free_after {
                        ok = wait(free, errors);
                    }
                }
                if ok {
                    // SAFETY: `src` holds the copy's bytes until the copy is done (the
                    // application's promise for a queued copy); the buffer is pinned
                    // memory of CHUNK bytes, free: its last DMA completed.
                    unsafe { copy_for_dma(chunk.buffer, src + chunk.offset, chunk.len) };
                }
                chunk.gate.open();
            }
        }
        Job::ToHost { dst, chunks, end } => {
            let mut ok = true;
            for chunk in chunks {
                ok = ok && wait(&chunk.done, errors);
                if ok {
                    // SAFETY: the buffer holds the chunk (its DMA completed); `dst` is
                    // the application's destination of the copy's size.
                    unsafe { copy_for_dma(dst + chunk.offset, chunk.buffer, chunk.len) };
                }
                if let Some(release) = chunk.releases {
                    release.open();
                }
            }
            end.open();
        }
    }
}

fn wait(event: &CudaEvent, errors: &HostErrors) -> bool {
    let waited = event.synchronize();
    let ok = waited.is_ok();
    keep_first_failure(errors, "olMemcpy", waited);
    ok
}
