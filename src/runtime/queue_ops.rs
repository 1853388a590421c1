//! The runtime's queue and event operations: creating and destroying them, and the
//! asynchronous forms of copies, fills and host functions.

use crate::memory::AllocationInfo;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{CopyDirection, Guard, InfoValue, Stream, StreamOp};
use crate::runtime::context::Runtime;
use crate::runtime::event::{Event, EventInfo};
use crate::runtime::platform::Device;
use crate::runtime::queue::{Queue, QueueInfo};
use std::sync::Arc;

/// One side of a queued copy: the address, the device that names it, and the allocation
/// it lies in (what `Runtime::locate` found).
pub struct CopySide<'a> {
    pub ptr: usize,
    pub device: &'a Arc<Device>,
    pub allocation: Option<AllocationInfo>,
}

impl Runtime {
    pub fn create_queue(&self, device: &Arc<Device>) -> Result<usize> {
        let stream = device.imp.create_stream()?;
        let queue = Arc::new(Queue::new(device.clone(), stream, self.profile.clone()));
        Ok(self.queues.insert(queue))
    }

    /// Ends the handle's life without waiting, as LLVM's: the work already queued runs
    /// on, and the last `olShutDown` waits for it.
    pub fn destroy_queue(&self, handle: usize) -> Result<()> {
        let queue = self.queues.remove(handle).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidQueue,
                format!("Queue {handle:#x} is not a live queue"),
            )
        })?;
        // Kept while work may still come or run (a stream someone else holds, through
        // the queue, can still be given work); the rest are let go here, so a program
        // that makes queues for ever does not grow the list.
        let may_run = |stream: &Arc<dyn Stream>| {
            Arc::strong_count(stream) > 1 || !matches!(stream.is_idle(), Ok(true))
        };
        let mut retired = self.retired.lock();
        retired.push(queue.stream.clone());
        drop(queue);
        retired.retain(may_run);
        Ok(())
    }

    /// One property; `Empty` is the stream's error where it stopped on one.
    pub fn queue_info(&self, queue: &Queue, key: QueueInfo) -> Result<InfoValue> {
        Ok(match key {
            QueueInfo::Device => InfoValue::Handle(queue.device.handle()),
            QueueInfo::Empty => InfoValue::Bool(queue.is_empty()?),
            QueueInfo::NativeHandle => InfoValue::Handle(queue.stream.native_handle()?),
        })
    }

    /// Whether the allocation a command's range lay in when it was enqueued (what
    /// `locate` found) is still there: an asynchronous command refuses to run on memory
    /// freed in between.
    fn still_live(
        self: &Arc<Self>,
        what: &str,
        ptr: usize,
        at_enqueue: Option<AllocationInfo>,
    ) -> Result<()> {
        let Some(before) = at_enqueue else {
            return Ok(());
        };
        match self.memory.find(ptr) {
            Some(now) if now == before => Ok(()),
            _ => Err(Error::invalid_argument(format!(
                "{what} {ptr:#x} lay in the {}-byte allocation at {:#x}, which was freed before the command ran",
                before.size, before.base
            ))),
        }
    }

    /// A copy in `queue`'s order. Between the queue's device and host memory, within the
    /// device, or between devices of the queue's backend, the stream copies; otherwise a
    /// host queue runs the synchronous copy (staged through host memory) as a step.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_copy(
        self: &Arc<Self>,
        queue: &Arc<Queue>,
        dst: CopySide<'_>,
        src: CopySide<'_>,
        size: usize,
    ) -> Result<()> {
        let (dst_alloc, src_alloc) = (dst.allocation, src.allocation);
        let (dst_device, src_device) = (dst.device, src.device);
        let (dst, src) = (dst.ptr, src.ptr);
        // Where the copy runs later on a host thread, it looks again that neither
        // allocation was freed meanwhile; on the device it runs as enqueued, just after
        // `locate` looked (one lookup per side).
        let rt = self.clone();
        let guard = queue.stream.runs_on_host().then(|| -> Guard {
            Box::new(move || {
                rt.still_live("DstPtr", dst, dst_alloc)?;
                rt.still_live("SrcPtr", src, src_alloc)
            })
        });
        // Between host memory and devices of the queue's own backend, the stream copies
        // (the backend reaches its other devices itself: CUDA by unified addressing,
        // remote devices by their servers); the direction says which sides are host
        // memory.
        let same_backend =
            |d: &Arc<Device>| d.is_host() || d.platform.index == queue.device.platform.index;
        let direction = CopyDirection::between(dst_device.is_host(), src_device.is_host())
            .of_ranges(dst, src, size);
        let direction = match direction {
            CopyDirection::HostToHost => Some(CopyDirection::HostToHost),
            _ if !(same_backend(dst_device) && same_backend(src_device)) => None,
            direction => Some(direction),
        };
        let op = match direction {
            Some(direction) => StreamOp::Copy {
                dst,
                src,
                size,
                direction,
            },
            // Through the host: a host step of the queue copies synchronously. Only a host
            // queue may run it, since it calls the devices' backends, which a GPU's
            // callback thread must not do.
            None if queue.device.is_host() => {
                let (rt, dd, sd) = (self.clone(), dst_device.clone(), src_device.clone());
                StreamOp::Host(Box::new(move || rt.mem_copy(dst, &dd, src, &sd, size)))
            }
            None => {
                return Err(Error::unsupported(format!(
                    "a queue of {} cannot copy between {} and {}: enqueue the copy on a queue of the host device, or copy without a queue",
                    queue.device.describe(),
                    dst_device.describe(),
                    src_device.describe()
                )))
            }
        };
        queue.enqueue("olMemcpy", op, guard)
    }

    /// A fill in `queue`'s order; `alloc` is what `locate` found at `ptr`.
    pub fn enqueue_fill(
        self: &Arc<Self>,
        queue: &Arc<Queue>,
        ptr: usize,
        alloc: Option<AllocationInfo>,
        pattern: Vec<u8>,
        size: usize,
    ) -> Result<()> {
        let rt = self.clone();
        let guard = queue
            .stream
            .runs_on_host()
            .then(|| -> Guard { Box::new(move || rt.still_live("Ptr", ptr, alloc)) });
        let op = StreamOp::Fill {
            dst: ptr,
            pattern,
            size,
        };
        queue.enqueue("olMemFill", op, guard)
    }

    pub fn enqueue_host_function(
        &self,
        queue: &Arc<Queue>,
        function: impl FnOnce() + Send + 'static,
    ) -> Result<()> {
        let work = Box::new(move || {
            function();
            Ok(())
        });
        queue.enqueue("olLaunchHostFunction", StreamOp::Host(work), None)
    }

    /// An event that completes when everything enqueued on `queue` so far is done.
    pub fn create_event(&self, queue: &Arc<Queue>, queue_handle: usize) -> Result<usize> {
        let event = Event {
            queue_handle,
            device: queue.device.clone(),
            inner: queue.stream.record()?,
        };
        Ok(self.events.insert(Arc::new(event)))
    }

    pub fn destroy_event(&self, handle: usize) -> Result<()> {
        self.events.remove(handle).map(|_| ()).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidEvent,
                format!("Event {handle:#x} is not a live event"),
            )
        })
    }

    /// Later work on `queue` waits for every event.
    pub fn wait_events(&self, queue: &Arc<Queue>, events: Vec<Arc<Event>>) -> Result<()> {
        events.iter().try_for_each(|event| queue.wait(event))
    }

    /// One property; `IsComplete` is the stream's error where the event cannot be reached.
    pub fn event_info(&self, event: &Event, key: EventInfo) -> Result<InfoValue> {
        Ok(match key {
            EventInfo::Queue => InfoValue::Handle(event.queue_handle),
            EventInfo::IsComplete => InfoValue::Bool(event.is_complete()?),
        })
    }

    pub fn event_elapsed_ms(&self, start: &Event, end: &Event) -> Result<f32> {
        if start.device.index != end.device.index {
            return Err(Error::invalid_argument(format!(
                "StartEvent is on {} but EndEvent is on {}; both must be events of the same device",
                start.device.describe(),
                end.device.describe()
            )));
        }
        start.inner.elapsed_ms(end.inner.as_ref())
    }
}
