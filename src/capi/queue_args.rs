//! Queue arguments shared by the memory and kernel entry points.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::queue::Queue;
use crate::runtime::Runtime;
use std::sync::Arc;

/// NULL means "synchronous"; anything else must be a live queue.
pub(crate) fn optional_queue<H>(rt: &Runtime, handle: *mut H) -> Result<Option<Arc<Queue>>> {
    if handle.is_null() {
        return Ok(None);
    }
    crate::capi::args::live(
        &rt.queues,
        handle,
        "Queue",
        "queue",
        ErrorCode::InvalidQueue,
    )
    .map(Some)
}
