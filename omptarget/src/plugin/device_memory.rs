//! Device memory as this library allocates and frees it: from the device's record/replay
//! region while it records or replays (`rr_region`), from liboffload otherwise.

use crate::plugin::ol::{self, Device, Result};
use crate::plugin::rr_region;

#[inline]
pub fn alloc(device: Device, size: usize) -> Result<usize> {
    alloc_kind(device, offload::capi::OL_ALLOC_TYPE_DEVICE, size)
}

/// `olMemAlloc` of one kind (`OL_ALLOC_TYPE_*`), or the next part of the device's
/// record/replay region.
#[inline]
pub fn alloc_kind(device: Device, kind: u32, size: usize) -> Result<usize> {
    match rr_region::alloc(device, size) {
        Some(placed) => placed,
        None => ol::alloc_kind(device, kind, size),
    }
}

/// Frees what `alloc` gave (nothing, for a record/replay region's part).
#[inline]
pub fn free(ptr: usize) -> Result<()> {
    if rr_region::owns(ptr) {
        return Ok(());
    }
    ol::free(ptr)
}
