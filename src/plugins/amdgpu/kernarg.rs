//! The kernarg segment of one launch, laid out as the kernel's metadata says: the
//! caller's explicit arguments first (its buffer already has them at their metadata
//! offsets, as LLVM's liboffload passes them), then the hidden arguments the runtime
//! fills from the launch.

use super::packet::{launch_shape, LaunchShape};
use crate::image::{AmdgpuKernel, AmdgpuKernelArg, ArgValueKind, HiddenArg};
use crate::plugin::foundation::error::{Error, Result};

/// The launch, as the hidden arguments describe it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernargLaunch {
    pub dimensions: u32,
    pub num_groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dynamic_shared: u32,
}

/// A segment larger than this comes from broken metadata, not a real kernel (v5's
/// hidden block alone is 256 bytes; explicit arguments are a few KiB at most).
pub const MAX_KERNARG_SIZE: usize = 1 << 20;

/// Segments are rounded to at least this, so the next one in a shared buffer stays
/// aligned for the 8-byte pointers and offsets every kernel reads.
const MIN_ALIGN: u64 = 8;

fn segment_align(kernel: &AmdgpuKernel) -> u64 {
    kernel.kernarg_segment_align.clamp(MIN_ALIGN, 4096)
}

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align).saturating_mul(align)
}

fn arg_end(arg: &AmdgpuKernelArg) -> u64 {
    arg.offset.saturating_add(arg.size)
}

/// End of the explicit arguments: the bytes a launch's buffer must hold.
pub fn explicit_size(kernel: &AmdgpuKernel) -> usize {
    let end = kernel.explicit_args().map(arg_end).max().unwrap_or(0);
    usize::try_from(end).unwrap_or(usize::MAX)
}

/// The bytes to allocate for `kernel`'s segment: the metadata's size or the end of the
/// last argument, whichever is larger, rounded to the segment's alignment (at least 8).
pub fn kernarg_size(kernel: &AmdgpuKernel) -> usize {
    let end = kernel.args.iter().map(arg_end).max().unwrap_or(0);
    let size = round_up(end.max(kernel.kernarg_segment_size), segment_align(kernel));
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// The alignment the segment's address needs: the metadata's `.kernarg_segment_align`,
/// and never less than 16, the HSA kernarg segment's minimum.
pub fn kernarg_align(kernel: &AmdgpuKernel) -> usize {
    kernel.kernarg_segment_align.clamp(16, 4096) as usize
}

/// The segment: `explicit` (the launch's argument buffer) then the hidden arguments.
pub fn build_kernarg(
    kernel: &AmdgpuKernel,
    explicit: &[u8],
    launch: &KernargLaunch,
) -> Result<Vec<u8>> {
    let mut segment = vec![0u8; checked_kernarg_size(kernel)?];
    write_kernarg(kernel, explicit, launch, &mut segment)?;
    Ok(segment)
}

/// The segment's size in bytes (`kernarg_size`), refused past `MAX_KERNARG_SIZE`.
pub fn checked_kernarg_size(kernel: &AmdgpuKernel) -> Result<usize> {
    let size = kernarg_size(kernel);
    if size > MAX_KERNARG_SIZE {
        return Err(Error::invalid_binary(format!(
            "kernel {}: the metadata asks for a {size}-byte kernarg segment, more than the \
             {MAX_KERNARG_SIZE} bytes this library accepts",
            kernel.name
        )));
    }
    Ok(size)
}

/// Lays the segment out in `segment` (the `checked_kernarg_size` bytes of a block of
/// kernarg memory, maybe recycled: zeroed here first), after checking the launch against
/// the kernel. A segment too short for an argument is refused, not written past.
pub fn write_kernarg(
    kernel: &AmdgpuKernel,
    explicit: &[u8],
    launch: &KernargLaunch,
    segment: &mut [u8],
) -> Result<()> {
    let shape = launch_shape(launch.dimensions, launch.num_groups, launch.group_size)
        .map_err(|e| e.context(format!("launching kernel {}", kernel.name)))?;
    write_shaped_kernarg(kernel, explicit, &shape, launch.dynamic_shared, segment)
}

/// `write_kernarg` for a launch whose `shape` the caller has checked already (the
/// dispatch packet takes the same one).
pub fn write_shaped_kernarg(
    kernel: &AmdgpuKernel,
    explicit: &[u8],
    shape: &LaunchShape,
    dynamic_shared: u32,
    segment: &mut [u8],
) -> Result<()> {
    check_group_fits(kernel, shape)?;
    let used = explicit_size(kernel);
    check_explicit_len(kernel, explicit.len(), used)?;
    let len = segment.len();
    let too_short = |end: usize| {
        Error::invalid_argument(format!(
            "kernel {}: a kernarg segment of {len} bytes, where its arguments reach byte {end}",
            kernel.name
        ))
    };
    segment.fill(0);
    // Bytes past `used` are the caller's struct padding: not copied, so the hidden
    // block starts zeroed whatever the caller left there.
    segment
        .get_mut(..used)
        .ok_or_else(|| too_short(used))?
        .copy_from_slice(&explicit[..used]);
    for arg in &kernel.args {
        let (ArgValueKind::Hidden(name), Some(hidden)) = (&arg.value_kind, arg.value_kind.hidden())
        else {
            continue;
        };
        let start = arg.offset as usize;
        if start < used {
            return Err(Error::invalid_binary(format!(
                "kernel {}: the metadata places hidden_{name} at offset {start}, inside the \
                 explicit arguments (which end at {used})",
                kernel.name
            )));
        }
        let value = hidden_value(&hidden, shape, dynamic_shared).to_le_bytes();
        let width = (arg.size as usize).min(value.len());
        let end = start.saturating_add(width);
        segment
            .get_mut(start..end)
            .ok_or_else(|| too_short(end))?
            .copy_from_slice(&value[..width]);
    }
    Ok(())
}

/// What the kernel reads from a hidden argument for this launch. The grid is always a
/// whole number of groups, so there is no partial group and the remainders are 0; the
/// launch has no global offset; and this runtime provides no printf or hostcall buffer,
/// device-side queue, heap or apertures, so those pointers are 0 (null) as in LLVM's plugin.
fn hidden_value(hidden: &HiddenArg, shape: &LaunchShape, dynamic_shared: u32) -> u64 {
    match *hidden {
        HiddenArg::BlockCount(d) => shape.num_groups.get(d).copied().map_or(0, u64::from),
        HiddenArg::GroupSize(d) => shape.group_size.get(d).copied().map_or(0, u64::from),
        HiddenArg::GridDims => u64::from(shape.dimensions),
        HiddenArg::DynamicLdsSize => u64::from(dynamic_shared),
        _ => 0,
    }
}

fn check_group_fits(kernel: &AmdgpuKernel, shape: &LaunchShape) -> Result<()> {
    let flat: u64 = shape.group_size.iter().map(|&s| u64::from(s)).product();
    let max = kernel.max_flat_workgroup_size;
    if max != 0 && flat > max {
        let [x, y, z] = shape.group_size;
        return Err(Error::invalid_argument(format!(
            "kernel {} runs at most {max} work-items per group, the launch asks for \
             {x}×{y}×{z} = {flat}",
            kernel.name
        )));
    }
    Ok(())
}

fn check_explicit_len(kernel: &AmdgpuKernel, given: usize, used: usize) -> Result<()> {
    // A C struct of the arguments may carry tail padding up to the segment alignment.
    let padded = if used == 0 {
        0
    } else {
        usize::try_from(round_up(used as u64, segment_align(kernel))).unwrap_or(usize::MAX)
    };
    if given >= used && given <= padded {
        return Ok(());
    }
    let count = kernel.explicit_args().count();
    let layout = match kernel.explicit_args().max_by_key(|a| arg_end(a)) {
        Some(last) => format!(
            "{count} argument(s), the last{} at offset {} taking {} bytes",
            last.name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default(),
            last.offset,
            last.size
        ),
        None => "no arguments".to_owned(),
    };
    let expected = if padded > used {
        format!("{used} bytes (up to {padded} with tail padding)")
    } else {
        format!("{used} bytes")
    };
    Err(Error::invalid_argument(format!(
        "kernel {} takes {expected} of explicit arguments ({layout}); the launch gave {given}",
        kernel.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(offset: u64, size: u64, kind: &str) -> AmdgpuKernelArg {
        AmdgpuKernelArg {
            name: None,
            type_name: None,
            offset,
            size,
            value_kind: if kind == "by_value" {
                ArgValueKind::ByValue
            } else {
                ArgValueKind::Hidden(kind.trim_start_matches("hidden_").to_owned())
            },
            address_space: None,
        }
    }

    fn kernel(args: Vec<AmdgpuKernelArg>, segment_size: u64) -> AmdgpuKernel {
        AmdgpuKernel {
            name: "k".into(),
            symbol: "k.kd".into(),
            kernarg_segment_size: segment_size,
            kernarg_segment_align: 8,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            sgpr_count: 0,
            vgpr_count: 0,
            wavefront_size: 64,
            max_flat_workgroup_size: 0,
            args,
        }
    }

    const LAUNCH: KernargLaunch = KernargLaunch {
        dimensions: 2,
        num_groups: [2, 3, 0],
        group_size: [8, 8, 0],
        dynamic_shared: 0,
    };

    #[test]
    fn broken_metadata_is_an_error_not_a_panic() {
        let huge = kernel(vec![arg(u64::MAX, 8, "hidden_block_count_x")], 0);
        let e = build_kernarg(&huge, &[], &LAUNCH).unwrap_err();
        assert!(e.details.contains("kernarg segment"), "{}", e.details);
        let e = build_kernarg(&kernel(vec![], 1 << 40), &[], &LAUNCH).unwrap_err();
        assert!(e.details.contains("more than"), "{}", e.details);
        let overlap = kernel(
            vec![arg(0, 8, "by_value"), arg(4, 4, "hidden_block_count_x")],
            16,
        );
        let e = build_kernarg(&overlap, &[0; 8], &LAUNCH).unwrap_err();
        assert!(
            e.details.contains("hidden_block_count_x at offset 4"),
            "{}",
            e.details
        );
    }

    #[test]
    fn odd_hidden_sizes_and_unknown_kinds() {
        // A 16-byte block count gets the value in its first 8 bytes; an unknown kind
        // and a 1-byte grid_dims slot are filled as far as they go.
        let k = kernel(
            vec![
                arg(0, 16, "hidden_block_count_y"),
                arg(16, 8, "hidden_something_new"),
                arg(24, 1, "hidden_grid_dims"),
            ],
            0,
        );
        let seg = build_kernarg(&k, &[], &LAUNCH).unwrap();
        assert_eq!((seg.len(), kernarg_align(&k)), (32, 16));
        assert_eq!(seg[0..16], [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(seg[16..24], [0; 8]);
        assert_eq!(seg[24..32], [2, 0, 0, 0, 0, 0, 0, 0]);
    }
}
