//! olLaunchKernel, olCalculateOptimalOccupancy, olGetKernelMaxCooperativeGroupCount.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::program::{live_symbol, with_symbol};
use crate::capi::queue_args;
use crate::capi::trace_text::{launch_properties, launch_size, written};
use crate::capi::types::*;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{KernelArgs, LaunchConfig};
use std::ffi::c_void;
use std::ptr::null;

/// More properties than this without `OL_KERNEL_LAUNCH_PROP_END` means the array is not
/// terminated; reading on would run off the caller's memory.
const MAX_LAUNCH_PROPERTIES: usize = 256;

fn launch_config(
    size: *const ol_kernel_launch_size_args_t,
    cooperative: bool,
) -> Result<LaunchConfig> {
    args::non_null(size, "LaunchSizeArgs")?;
    // SAFETY: non-NULL; the caller passes a valid `ol_kernel_launch_size_args_t`.
    let size = unsafe { &*size };
    let dimensions = u32::try_from(size.Dimensions).unwrap_or(u32::MAX);
    let extents = |d: ol_dimensions_t| [d.x, d.y, d.z];
    Ok(LaunchConfig::new(
        dimensions,
        extents(size.NumGroups),
        extents(size.GroupSize),
        size.DynSharedMemory,
        cooperative,
    ))
}

/// What a launch's properties ask.
#[derive(Clone, Copy, Debug, Default)]
struct Properties {
    cooperative: bool,
    c_parameters: bool,
}

fn properties(props: *const ol_kernel_launch_prop_t) -> Result<Properties> {
    let mut found = Properties::default();
    if props.is_null() {
        return Ok(found);
    }
    for i in 0..MAX_LAUNCH_PROPERTIES {
        // SAFETY: the caller's array runs up to its OL_KERNEL_LAUNCH_PROP_END entry, and
        // we stop there.
        let prop = unsafe { &*props.add(i) };
        let flag = match prop.r#type {
            OL_KERNEL_LAUNCH_PROP_TYPE_NONE => return Ok(found),
            OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE => &mut found.cooperative,
            OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS => &mut found.c_parameters,
            other => {
                return Err(Error::invalid_enumeration(format!(
                    "Properties[{i}].type is {other}; expected OL_KERNEL_LAUNCH_PROP_TYPE_NONE (0), IS_COOPERATIVE (1) or C_PARAMETERS ({OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS:#x})"
                )))
            }
        };
        let data = args::non_null(prop.data, &format!("Properties[{i}].data"))?;
        // SAFETY: non-NULL; for both kinds of property `data` points to a bool.
        *flag = unsafe { *(data as *const bool) };
    }
    Err(Error::invalid_argument(format!(
        "Properties has more than {MAX_LAUNCH_PROPERTIES} entries without OL_KERNEL_LAUNCH_PROP_END; the array must end with it"
    )))
}

fn kernel_args(data: *const c_void, size: usize) -> Result<KernelArgs> {
    if size == 0 {
        return Ok(KernelArgs::default());
    }
    if data.is_null() {
        return Err(Error::invalid_argument(format!(
            "ArgumentsData is NULL but ArgumentsSize is {size}; expected a pointer to the kernel's {size}-byte argument struct"
        )));
    }
    // SAFETY: non-NULL, and the caller promises `ArgumentsSize` readable bytes there;
    // they are copied before the call returns.
    Ok(KernelArgs::from_bytes(unsafe {
        std::slice::from_raw_parts(data.cast::<u8>(), size)
    }))
}

/// Launches `Kernel` on `Device` over the grid `LaunchSizeArgs`; a NULL `Queue` runs it
/// synchronously. `ArgumentsData` points to the kernel's arguments laid out as a C struct
/// of its parameters (`ArgumentsSize` bytes; NULL and 0 for none); it is copied before the
/// call returns. With a `Queue`, what fails while the kernel runs is reported by the
/// queue's next `olSyncQueue` (or `olSyncEvent` of a later event), not here: its fault on
/// CUDA, AMDGPU and remote devices (a fault ends a remote device's server, and on the
/// host device the process), on remote devices also an `ArgumentsSize` the kernel does
/// not take (others check it here), and on the host device memory or threads the launch
/// could not get.
#[no_mangle]
pub extern "C" fn olLaunchKernel(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    ArgumentsData: *const c_void,
    ArgumentsSize: usize,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
) -> ol_result_t {
    let (data, size) = (ArgumentsData, ArgumentsSize);
    launch(
        Queue,
        Device,
        Kernel,
        data,
        size,
        LaunchSizeArgs,
        null(),
        null(),
    )
}

/// `olLaunchKernel` with the caller's source location.
#[no_mangle]
pub extern "C" fn olLaunchKernelWithCodeLoc(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    ArgumentsData: *const c_void,
    ArgumentsSize: usize,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    let (data, size) = (ArgumentsData, ArgumentsSize);
    launch(
        Queue,
        Device,
        Kernel,
        data,
        size,
        LaunchSizeArgs,
        null(),
        CodeLocation,
    )
}

/// Extension: `olLaunchKernel` with launch properties, an array ended by
/// `OL_KERNEL_LAUNCH_PROP_END` (NULL: none). A queued launch's failures are reported at
/// the queue's next sync, as `olLaunchKernel`'s are.
#[no_mangle]
pub extern "C" fn olLaunchKernelWithProperties(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    ArgumentsData: *const c_void,
    ArgumentsSize: usize,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    Properties: *const ol_kernel_launch_prop_t,
) -> ol_result_t {
    let (data, size) = (ArgumentsData, ArgumentsSize);
    launch(
        Queue,
        Device,
        Kernel,
        data,
        size,
        LaunchSizeArgs,
        Properties,
        null(),
    )
}

/// For the Rust programs built on this API (offload-replay, libomptarget): a launch on no
/// queue (done when it returns) with `args` as the argument buffer (NULL when empty),
/// flagged as the kernel's parameters laid out as a C struct
/// (`OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS`) when `c_parameters`.
pub fn launch_now_with_args(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    args: &[u8],
    size: &ol_kernel_launch_size_args_t,
    c_parameters: bool,
) -> ol_result_t {
    let mut yes = true;
    let properties = [
        ol_kernel_launch_prop_t {
            r#type: OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS,
            data: (&mut yes as *mut bool).cast(),
        },
        ol_kernel_launch_prop_t {
            r#type: OL_KERNEL_LAUNCH_PROP_TYPE_NONE,
            data: std::ptr::null_mut(),
        },
    ];
    let data: *const c_void = if args.is_empty() {
        null()
    } else {
        args.as_ptr().cast()
    };
    let properties = if c_parameters {
        &properties[..]
    } else {
        &properties[1..]
    };
    olLaunchKernelWithProperties(
        std::ptr::null_mut(),
        device,
        kernel,
        data,
        args.len(),
        size,
        properties.as_ptr(),
    )
}

/// `olLaunchKernelWithProperties` with the caller's source location.
#[no_mangle]
pub extern "C" fn olLaunchKernelWithPropertiesWithCodeLoc(
    Queue: ol_queue_handle_t,
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    ArgumentsData: *const c_void,
    ArgumentsSize: usize,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    Properties: *const ol_kernel_launch_prop_t,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    let (data, size) = (ArgumentsData, ArgumentsSize);
    launch(
        Queue,
        Device,
        Kernel,
        data,
        size,
        LaunchSizeArgs,
        Properties,
        CodeLocation,
    )
}

#[allow(clippy::too_many_arguments)]
fn launch(
    queue: ol_queue_handle_t,
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    data: *const c_void,
    data_size: usize,
    size: *const ol_kernel_launch_size_args_t,
    props: *const ol_kernel_launch_prop_t,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    let name = match props.is_null() {
        true => "olLaunchKernel",
        false => "olLaunchKernelWithProperties",
    };
    call(
        name,
        loc,
        |_| {
            let shown = format!(
                "Queue={queue:p}, Device={device:p}, Kernel={kernel:p}, ArgumentsData={data:p}, ArgumentsSize={data_size}, LaunchSizeArgs={}",
                launch_size(size)
            );
            match props.is_null() {
                true => shown,
                false => format!("{shown}, Properties={}", launch_properties(props)),
            }
        },
        || {
            // LLVM's order: the argument buffer, then NULL handles, then NULL pointers.
            args::with_runtime(|rt| {
                let mut args = kernel_args(data, data_size)?;
                args::handle_given(device, "Device")?;
                args::handle_given(kernel, "Kernel")?;
                args::non_null(size, "LaunchSizeArgs")?;
                let d = args::device(rt, device, "Device")?;
                queue_args::with_optional_queue(rt, queue, |q| {
                    with_symbol(rt, kernel, "Kernel", |symbol| {
                        let props = properties(props)?;
                        let config = launch_config(size, props.cooperative)?;
                        args.c_parameters = props.c_parameters;
                        rt.launch_kernel(q, d, symbol, config, args)
                    })
                })
            })
        },
    )
}

/// Writes to `GroupSize` the work-group size that fills `Device` for `Kernel`, given
/// `SharedMemory` bytes of dynamic shared memory per work-item.
#[no_mangle]
pub extern "C" fn olCalculateOptimalOccupancy(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    SharedMemory: usize,
    GroupSize: *mut usize,
) -> ol_result_t {
    occupancy(Device, Kernel, SharedMemory, GroupSize, null())
}

/// `olCalculateOptimalOccupancy` with the caller's source location.
#[no_mangle]
pub extern "C" fn olCalculateOptimalOccupancyWithCodeLoc(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    SharedMemory: usize,
    GroupSize: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    occupancy(Device, Kernel, SharedMemory, GroupSize, CodeLocation)
}

fn occupancy(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    shared: usize,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olCalculateOptimalOccupancy",
        loc,
        |ok| {
            format!(
                "Device={device:p}, Kernel={kernel:p}, SharedMemory={shared}, GroupSize={}",
                written(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                args::handle_given(device, "Device")?;
                args::handle_given(kernel, "Kernel")?;
                let out = args::out_ptr(out, "GroupSize")?;
                args::device(rt, device, "Device")?;
                let symbol = live_symbol(rt, kernel, "Kernel")?;
                *out = symbol.kernel()?.optimal_group_size(shared)?;
                Ok(())
            })
        },
    )
}

/// Writes to `MaxGroupCount` how many work-groups of `LaunchSizeArgs`'s shape can be
/// resident at once for a cooperative launch of `Kernel`.
#[no_mangle]
pub extern "C" fn olGetKernelMaxCooperativeGroupCount(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    MaxGroupCount: *mut u32,
) -> ol_result_t {
    max_cooperative(Device, Kernel, LaunchSizeArgs, MaxGroupCount, null())
}

/// `olGetKernelMaxCooperativeGroupCount` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetKernelMaxCooperativeGroupCountWithCodeLoc(
    Device: ol_device_handle_t,
    Kernel: ol_symbol_handle_t,
    LaunchSizeArgs: *const ol_kernel_launch_size_args_t,
    MaxGroupCount: *mut u32,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    max_cooperative(Device, Kernel, LaunchSizeArgs, MaxGroupCount, CodeLocation)
}

fn max_cooperative(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    size: *const ol_kernel_launch_size_args_t,
    out: *mut u32,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olGetKernelMaxCooperativeGroupCount",
        loc,
        |ok| {
            format!(
                "Device={device:p}, Kernel={kernel:p}, LaunchSizeArgs={}, MaxGroupCount={}",
                launch_size(size),
                written(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                let d = args::device(rt, device, "Device")?;
                let symbol = live_symbol(rt, kernel, "Kernel")?;
                let k = symbol.kernel()?;
                let config = launch_config(size, false)?;
                let limits = d.launch_limits().tighter(k.limits());
                crate::plugin::check_grid(limits, &config, &|| d.describe())?;
                let out = args::out_ptr(out, "MaxGroupCount")?;
                *out = k.max_cooperative_groups(&config)?;
                Ok(())
            })
        },
    )
}
