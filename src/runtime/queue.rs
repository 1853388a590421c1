//! Queues as the runtime sees them: a device's stream (the backend's, see
//! `plugin::Stream`) and what every backend's queue has in common: its device, the
//! shutdown accounting, and waits on events of another backend, bridged here once.

use crate::plugin::{Stream, StreamEvent, StreamOp};
use crate::runtime::error::Result;
use crate::runtime::event::Event;
use crate::runtime::platform::Device;
use std::sync::Arc;

/// `ol_queue_info_t`, in the header's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueInfo {
    Device = 0,
    Empty = 1,
}

impl TryFrom<u32> for QueueInfo {
    type Error = u32;
    fn try_from(v: u32) -> std::result::Result<Self, u32> {
        match v {
            0 => Ok(QueueInfo::Device),
            1 => Ok(QueueInfo::Empty),
            _ => Err(v),
        }
    }
}

pub struct Queue {
    pub device: Arc<Device>,
    pub stream: Arc<dyn Stream>,
}

impl Queue {
    pub fn new(device: Arc<Device>, stream: Arc<dyn Stream>) -> Self {
        Queue { device, stream }
    }

    /// Appends an operation (see `Stream::enqueue`).
    pub fn enqueue(
        &self,
        name: &'static str,
        op: StreamOp,
        guard: Option<crate::plugin::Guard>,
    ) -> Result<()> {
        self.stream.enqueue(name, op, guard)
    }

    /// Later work waits for `event`: through the stream where the event is of the same
    /// backend, else by a host step of this stream that waits for the event.
    pub fn wait(&self, event: &Event) -> Result<()> {
        if event.inner.is_complete() {
            return Ok(());
        }
        if event.device.platform.index == self.device.platform.index {
            return self.stream.wait(&event.inner);
        }
        let other: Arc<dyn StreamEvent> = event.inner.clone();
        self.stream.enqueue(
            "olWaitEvents",
            StreamOp::Host(Box::new(move || other.synchronize())),
            None,
        )
    }

    pub fn sync(&self) -> Result<()> {
        self.stream.synchronize()
    }

    pub fn is_empty(&self) -> bool {
        self.stream.is_idle()
    }
}
