//! AQL packets as the packet processor reads them: kernel dispatch and barrier-AND.
//! (Interface fixed first so the queue code and the encoders are written side by side;
//! the encoders are the next commit.)

use crate::runtime::error::{Error, ErrorCode, Result};

/// `hsa_kernel_dispatch_packet_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDispatchPacket {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size: [u16; 3],
    pub reserved0: u16,
    pub grid_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarrierAndPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// What a dispatch needs, in the launch's terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchParams {
    pub dimensions: u32,
    pub num_groups: [u32; 3],
    pub group_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub completion_signal: u64,
}

fn not_yet() -> Error {
    Error::new(
        ErrorCode::Unimplemented,
        "AQL packet encoding is not built yet",
    )
}

/// The dispatch packet, `header`/`setup` holding what must be published last (the
/// caller writes the rest, then stores `header_word` with release ordering).
pub fn dispatch_packet(_params: &DispatchParams) -> Result<KernelDispatchPacket> {
    Err(not_yet())
}

/// A barrier-AND packet waiting for up to five signals.
pub fn barrier_and_packet(_deps: &[u64], _completion_signal: u64) -> Result<BarrierAndPacket> {
    Err(not_yet())
}

/// The packet's first 32 bits as one store publishes them.
pub fn header_word(header: u16, setup: u16) -> u32 {
    u32::from(header) | (u32::from(setup) << 16)
}
