//! Events as the runtime sees them: the backend's event (see `plugin::StreamEvent`) and
//! what the API promises beyond it: it names its queue and device, and stays valid after
//! its queue is destroyed.

use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::Result;
use crate::plugin::StreamEvent;
use crate::runtime::platform::Device;
use std::sync::Arc;

c_enum! {
    /// `ol_event_info_t`, in the header's order.
    pub enum EventInfo {
        Queue = 0,
        IsComplete = 1,
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
