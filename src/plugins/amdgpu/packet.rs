//! AQL packets as the packet processor reads them: kernel dispatch and barrier-AND.
//! Encoding only (no HSA call): the queue code copies a packet into its slot, then
//! publishes `header_word` with one release store.

use crate::plugin::foundation::error::{Error, Result};

/// Bit offsets of the packet header fields (`hsa_packet_header_t`).
pub const HSA_PACKET_HEADER_TYPE: u16 = 0;
pub const HSA_PACKET_HEADER_BARRIER: u16 = 8;
pub const HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE: u16 = 9;
pub const HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE: u16 = 11;

/// Packet types (`hsa_packet_type_t`).
pub const HSA_PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
pub const HSA_PACKET_TYPE_INVALID: u16 = 1;
pub const HSA_PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const HSA_PACKET_TYPE_BARRIER_AND: u16 = 3;
pub const HSA_PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
pub const HSA_PACKET_TYPE_BARRIER_OR: u16 = 5;

/// Fence scopes (`hsa_fence_scope_t`).
pub const HSA_FENCE_SCOPE_NONE: u16 = 0;
pub const HSA_FENCE_SCOPE_AGENT: u16 = 1;
pub const HSA_FENCE_SCOPE_SYSTEM: u16 = 2;

/// Bit offset of the dimension count in a dispatch packet's `setup`.
pub const HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS: u16 = 0;

/// Dependency signals one barrier-AND packet holds; longer lists are chained by the caller.
pub const BARRIER_AND_MAX_DEPS: usize = 5;

/// System-scope acquire and release: kernels read host-written memory (kernargs, pinned
/// buffers) and the host reads their results after the completion signal.
const SYSTEM_FENCES: u16 = (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
    | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);

/// The header of every dispatch packet. The barrier bit is set because a stream is in
/// order: a kernel must not start before the packets ahead of it in the queue are done.
pub const DISPATCH_HEADER: u16 = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE)
    | (1 << HSA_PACKET_HEADER_BARRIER)
    | SYSTEM_FENCES;

/// The header of every barrier-AND packet; the barrier bit makes its completion signal
/// also mean "everything ahead of it in the queue is done" (what an event record needs).
pub const BARRIER_AND_HEADER: u16 = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE)
    | (1 << HSA_PACKET_HEADER_BARRIER)
    | SYSTEM_FENCES;

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

/// What a dispatch packet carries besides the launch's shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchTarget {
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub completion_signal: u64,
}

const AXES: [char; 3] = ['x', 'y', 'z'];

/// A launch's shape after checking: `dimensions` in 1..=3, and the unused dimensions
/// set to 1 group of 1 work-item (the packet processor and the hidden arguments both
/// want 1 there, never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub dimensions: u16,
    pub num_groups: [u32; 3],
    pub group_size: [u16; 3],
    /// Work-items per dimension: groups × group size.
    pub grid_size: [u32; 3],
}

/// Checks a launch's dimensions, group counts and group sizes (shared by the dispatch
/// packet and the kernarg builder, so both see the same shape).
pub fn launch_shape(
    dimensions: u32,
    num_groups: [u32; 3],
    group_size: [u32; 3],
) -> Result<LaunchShape> {
    if !(1..=3).contains(&dimensions) {
        return Err(Error::invalid_argument(format!(
            "a launch has 1, 2 or 3 dimensions, not {dimensions}"
        )));
    }
    let mut shape = LaunchShape {
        dimensions: dimensions as u16,
        num_groups: [1; 3],
        group_size: [1; 3],
        grid_size: [1; 3],
    };
    for d in 0..3 {
        let (groups, size, axis) = (num_groups[d], group_size[d], AXES[d]);
        if d >= dimensions as usize {
            // Unused: 0 and 1 both mean "not used"; anything else is work that
            // would silently be dropped.
            if groups > 1 || size > 1 {
                return Err(Error::invalid_argument(format!(
                    "the launch has {dimensions} dimension(s) but asks for {groups} group(s) \
                     of {size} in {axis}; an unused dimension must be 1 (or 0)"
                )));
            }
            continue;
        }
        if groups == 0 {
            return Err(Error::invalid_argument(format!(
                "the launch has 0 groups in {axis}; each used dimension needs at least 1"
            )));
        }
        let size16 = u16::try_from(size)
            .ok()
            .filter(|s| *s >= 1)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "the group size in {axis} is {size}; it must be 1 to {} (the packet holds \
                 16 bits)",
                    u16::MAX
                ))
            })?;
        let grid = groups.checked_mul(size).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the grid in {axis} is {groups} groups × {size} work-items = {}, more than \
                 the packet's 32-bit limit {}",
                u64::from(groups) * u64::from(size),
                u32::MAX
            ))
        })?;
        shape.num_groups[d] = groups;
        shape.group_size[d] = size16;
        shape.grid_size[d] = grid;
    }
    Ok(shape)
}

/// The dispatch packet of a launch whose `shape` the caller has checked (`launch_shape`;
/// the kernarg segment takes the same one), `header`/`setup` holding what must be
/// published last (the caller writes the rest, then stores `header_word` with release
/// ordering).
pub fn shaped_dispatch_packet(
    shape: &LaunchShape,
    target: &DispatchTarget,
) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: DISPATCH_HEADER,
        setup: shape.dimensions << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        workgroup_size: shape.group_size,
        reserved0: 0,
        grid_size: shape.grid_size,
        private_segment_size: target.private_segment_size,
        group_segment_size: target.group_segment_size,
        kernel_object: target.kernel_object,
        kernarg_address: target.kernarg_address,
        reserved2: 0,
        completion_signal: target.completion_signal,
    }
}

/// A barrier-AND packet waiting for up to five signals (handles; 0 = no signal).
pub fn barrier_and_packet(deps: &[u64], completion_signal: u64) -> Result<BarrierAndPacket> {
    if deps.len() > BARRIER_AND_MAX_DEPS {
        return Err(Error::invalid_argument(format!(
            "a barrier-AND packet waits for at most {BARRIER_AND_MAX_DEPS} signals, {} were \
             given; chain several packets",
            deps.len()
        )));
    }
    let mut dep_signal = [0u64; BARRIER_AND_MAX_DEPS];
    dep_signal[..deps.len()].copy_from_slice(deps);
    Ok(BarrierAndPacket {
        header: BARRIER_AND_HEADER,
        dep_signal,
        completion_signal,
        ..BarrierAndPacket::default()
    })
}

/// The packet's first 32 bits as one store publishes them.
pub fn header_word(header: u16, setup: u16) -> u32 {
    u32::from(header) | (u32::from(setup) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_have_type_barrier_and_system_fences() {
        assert_eq!(DISPATCH_HEADER & 0xff, 2);
        assert_eq!(BARRIER_AND_HEADER & 0xff, 3);
        for h in [DISPATCH_HEADER, BARRIER_AND_HEADER] {
            assert_eq!((h >> 8) & 1, 1, "barrier bit");
            assert_eq!((h >> 9) & 3, 2, "acquire scope");
            assert_eq!((h >> 11) & 3, 2, "release scope");
            assert_eq!(h >> 13, 0, "reserved bits");
        }
        assert_eq!(header_word(0x1502, 3), 0x0003_1502);
    }

    #[test]
    fn unused_dimensions_become_one() {
        let s = launch_shape(1, [4, 0, 1], [64, 0, 0]).unwrap();
        assert_eq!(s.num_groups, [4, 1, 1]);
        assert_eq!(s.group_size, [64, 1, 1]);
        assert_eq!(s.grid_size, [256, 1, 1]);
        let e = launch_shape(2, [4, 2, 3], [8, 8, 1]).unwrap_err();
        assert!(e.details.contains("in z"), "{}", e.details);
    }
}
