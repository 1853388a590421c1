//! Queue arguments shared by the memory and kernel entry points.

use crate::capi::args;
use crate::plugin::foundation::error::{ErrorCode, Result};
use crate::runtime::queue::Queue;
use crate::runtime::Runtime;
use std::sync::Arc;

/// Runs `f` with the queue a handle names: NULL means "synchronous" (`None`); anything
/// else must be a live queue.
pub(crate) fn with_optional_queue<H, R>(
    rt: &Runtime,
    handle: *mut H,
    f: impl FnOnce(Option<&Arc<Queue>>) -> Result<R>,
) -> Result<R> {
    if handle.is_null() {
        return f(None);
    }
    args::with_live(
        &rt.queues,
        handle,
        "Queue",
        "queue",
        ErrorCode::InvalidQueue,
        |q| f(Some(q)),
    )
}
