//! Events as the runtime sees them: the backend's event (see `plugin::StreamEvent`) and
//! what the API promises beyond it: it names its queue and device, and stays valid after
//! its queue is destroyed.

use crate::plugin::foundation::error::Result;
use crate::plugin::StreamEvent;
use crate::runtime::platform::Device;
use std::sync::Arc;

/// `ol_event_info_t`, in the header's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventInfo {
    Queue = 0,
    IsComplete = 1,
}

impl TryFrom<u32> for EventInfo {
    type Error = u32;
    fn try_from(v: u32) -> std::result::Result<Self, u32> {
        match v {
            0 => Ok(EventInfo::Queue),
            1 => Ok(EventInfo::IsComplete),
            _ => Err(v),
        }
    }
}

pub struct Event {
    /// The handle of the queue the event was created on (kept after that queue is gone).
    pub queue_handle: usize,
    pub device: Arc<Device>,
    pub inner: Arc<dyn StreamEvent>,
}

impl Event {
    pub fn is_complete(&self) -> Result<bool> {
        self.inner.is_complete()
    }
}
