//! olMemAlloc, olMemFree, olMemcpy, olMemFill, olGetMemInfo[Size], olMemRegister,
//! olMemUnregister.
#![allow(non_snake_case)]

use crate::capi::args;
use crate::capi::entry::call;
use crate::capi::info;
use crate::capi::queue_args;
use crate::capi::trace_text::{enumerator, written_handle};
use crate::capi::types::*;
use crate::plugin::foundation::error::Result;
use crate::plugin::AllocKind;
use crate::runtime::memory_ops::MemInfo;
use crate::runtime::queue_ops::CopySide;
use crate::runtime::Runtime;
use std::ffi::c_void;
use std::ptr::null;

const ALLOC_TYPE_EXPECTED: &str =
    "an ol_alloc_type_t: OL_ALLOC_TYPE_HOST (0), OL_ALLOC_TYPE_DEVICE (1) or OL_ALLOC_TYPE_MANAGED (2)";

/// Allocates `Size` bytes of `Type` memory on `Device`, aligned to at least 64 bytes.
#[no_mangle]
pub extern "C" fn olMemAlloc(
    Device: ol_device_handle_t,
    Type: ol_alloc_type_raw_t,
    Size: usize,
    AllocationOut: *mut *mut c_void,
) -> ol_result_t {
    mem_alloc(Device, Type, Size, AllocationOut, null())
}

/// `olMemAlloc` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemAllocWithCodeLoc(
    Device: ol_device_handle_t,
    Type: ol_alloc_type_raw_t,
    Size: usize,
    AllocationOut: *mut *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_alloc(Device, Type, Size, AllocationOut, CodeLocation)
}

fn mem_alloc(
    device: ol_device_handle_t,
    kind: u32,
    size: usize,
    out: *mut *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemAlloc",
        loc,
        |ok| {
            format!(
                "Device={device:p}, Type={}, Size={size}, AllocationOut={}",
                enumerator(ol_alloc_type_t::NAMES, kind),
                written_handle(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                Runtime::check_nonzero_size(size)?;
                args::handle_given(device, "Device")?;
                let out = args::out_ptr(out, "AllocationOut")?;
                let d = args::device(rt, device, "Device")?;
                let kind: AllocKind = args::enumeration(kind, "Type", ALLOC_TYPE_EXPECTED)?;
                *out = rt.mem_alloc(d, kind, size)? as *mut c_void;
                Ok(())
            })
        },
    )
}

/// Extension: `olMemAlloc` at exactly `Address` (a recorded launch's memory, replayed
/// where it was recorded), freed by `olMemFree`. `OL_ERRC_INVALID_VALUE` when the range is
/// taken (by an allocation, otherwise in this process, on a remote server or in a GPU's
/// address space); `OL_ERRC_UNSUPPORTED` where the backend cannot place memory (a GPU
/// without virtual memory management, memory other than device memory on a GPU; the
/// host device's memory is the process's own, which a caller maps itself). A GPU maps
/// the whole granules the range touches (2 MiB on NVIDIA GPUs).
#[no_mangle]
pub extern "C" fn olMemAllocAt(
    Device: ol_device_handle_t,
    Type: ol_alloc_type_raw_t,
    Size: usize,
    Address: *mut c_void,
    AllocationOut: *mut *mut c_void,
) -> ol_result_t {
    mem_alloc_at(Device, Type, Size, Address, AllocationOut, null())
}

/// `olMemAllocAt` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemAllocAtWithCodeLoc(
    Device: ol_device_handle_t,
    Type: ol_alloc_type_raw_t,
    Size: usize,
    Address: *mut c_void,
    AllocationOut: *mut *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_alloc_at(Device, Type, Size, Address, AllocationOut, CodeLocation)
}

fn mem_alloc_at(
    device: ol_device_handle_t,
    kind: u32,
    size: usize,
    at: *mut c_void,
    out: *mut *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemAllocAt",
        loc,
        |ok| {
            format!(
                "Device={device:p}, Type={}, Size={size}, Address={at:p}, AllocationOut={}",
                enumerator(ol_alloc_type_t::NAMES, kind),
                written_handle(out, ok)
            )
        },
        || {
            args::with_runtime(|rt| {
                Runtime::check_nonzero_size(size)?;
                args::handle_given(device, "Device")?;
                args::non_null(at.cast_const(), "Address")?;
                let out = args::out_ptr(out, "AllocationOut")?;
                let d = args::device(rt, device, "Device")?;
                let kind: AllocKind = args::enumeration(kind, "Type", ALLOC_TYPE_EXPECTED)?;
                *out = rt.mem_alloc_at(d, kind, size, at as usize)? as *mut c_void;
                Ok(())
            })
        },
    )
}

/// Frees an allocation; `Address` must be its start. Anything else is
/// `OL_ERRC_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn olMemFree(Address: *mut c_void) -> ol_result_t {
    mem_free(Address, null())
}

/// `olMemFree` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemFreeWithCodeLoc(
    Address: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_free(Address, CodeLocation)
}

fn mem_free(address: *mut c_void, loc: *const ol_code_location_t) -> ol_result_t {
    call(
        "olMemFree",
        loc,
        |_| format!("Address={address:p}"),
        || args::with_runtime(|rt| rt.mem_free(args::non_null(address, "Address")?)),
    )
}

/// Copies `Size` bytes; host memory is named by the host device. A NULL `Queue` copies
/// synchronously. With a `Queue`, what fails while the copy runs is reported by the
/// queue's next `olSyncQueue` (or `olSyncEvent` of a later event), not here: on the host
/// and remote devices an allocation freed before the copy ran, and the server's error on
/// remote devices; on CUDA and AMDGPU devices the driver's error.
#[no_mangle]
pub extern "C" fn olMemcpy(
    Queue: ol_queue_handle_t,
    DstPtr: *mut c_void,
    DstDevice: ol_device_handle_t,
    SrcPtr: *const c_void,
    SrcDevice: ol_device_handle_t,
    Size: usize,
) -> ol_result_t {
    memcpy(Queue, DstPtr, DstDevice, SrcPtr, SrcDevice, Size, null())
}

/// `olMemcpy` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemcpyWithCodeLoc(
    Queue: ol_queue_handle_t,
    DstPtr: *mut c_void,
    DstDevice: ol_device_handle_t,
    SrcPtr: *const c_void,
    SrcDevice: ol_device_handle_t,
    Size: usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    memcpy(
        Queue,
        DstPtr,
        DstDevice,
        SrcPtr,
        SrcDevice,
        Size,
        CodeLocation,
    )
}

fn memcpy(
    queue: ol_queue_handle_t,
    dst: *mut c_void,
    dst_device: ol_device_handle_t,
    src: *const c_void,
    src_device: ol_device_handle_t,
    size: usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemcpy",
        loc,
        |_| {
            format!("Queue={queue:p}, DstPtr={dst:p}, DstDevice={dst_device:p}, SrcPtr={src:p}, SrcDevice={src_device:p}, Size={size}")
        },
        || {
            args::with_runtime(|rt| {
                args::handle_given(dst_device, "DstDevice")?;
                args::handle_given(src_device, "SrcDevice")?;
                let dst = args::non_null(dst, "DstPtr")?;
                let src = args::non_null(src, "SrcPtr")?;
                let dd = args::device(rt, dst_device, "DstDevice")?;
                let sd = args::device(rt, src_device, "SrcDevice")?;
                queue_args::with_optional_queue(rt, queue, |queue| {
                    let dst_alloc = rt.locate("DstPtr", dst, size, dd, queue.is_some())?;
                    let src_alloc = rt.locate("SrcPtr", src, size, sd, queue.is_some())?;
                    // Zero bytes touch nothing: nothing is queued (as for a fill), so a
                    // free before the queue reaches it is no error.
                    if size == 0 {
                        return Ok(());
                    }
                    match queue {
                        None => rt.mem_copy(dst, dd, src, sd, size),
                        Some(q) => {
                            let to = CopySide {
                                ptr: dst,
                                device: dd,
                                allocation: dst_alloc,
                            };
                            let from = CopySide {
                                ptr: src,
                                device: sd,
                                allocation: src_alloc,
                            };
                            rt.enqueue_copy(q, to, from, size)
                        }
                    }
                })
            })
        },
    )
}

/// Fills `FillSize` bytes at `Ptr` with copies of the `PatternSize`-byte pattern. With a
/// `Queue`, what fails while the fill runs is reported by the queue's next `olSyncQueue`
/// (or `olSyncEvent` of a later event), not here: on the host and remote devices an
/// allocation freed before the fill ran, and the server's error on remote devices; on
/// CUDA and AMDGPU devices the driver's error.
#[no_mangle]
pub extern "C" fn olMemFill(
    Queue: ol_queue_handle_t,
    Ptr: *mut c_void,
    PatternSize: usize,
    PatternPtr: *const c_void,
    FillSize: usize,
) -> ol_result_t {
    mem_fill(Queue, Ptr, PatternSize, PatternPtr, FillSize, null())
}

/// `olMemFill` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemFillWithCodeLoc(
    Queue: ol_queue_handle_t,
    Ptr: *mut c_void,
    PatternSize: usize,
    PatternPtr: *const c_void,
    FillSize: usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_fill(Queue, Ptr, PatternSize, PatternPtr, FillSize, CodeLocation)
}

fn mem_fill(
    queue: ol_queue_handle_t,
    ptr: *mut c_void,
    pattern_size: usize,
    pattern: *const c_void,
    fill_size: usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemFill",
        loc,
        |_| {
            format!("Queue={queue:p}, Ptr={ptr:p}, PatternSize={pattern_size}, PatternPtr={pattern:p}, FillSize={fill_size}")
        },
        || {
            args::with_runtime(|rt| {
                Runtime::check_fill(pattern_size, fill_size)?;
                let ptr = args::non_null(ptr, "Ptr")?;
                let pattern_addr = args::non_null(pattern, "PatternPtr")?;
                queue_args::with_optional_queue(rt, queue, |queue| {
                    // SAFETY: non-NULL, and the caller promises `PatternSize` readable bytes. The
                    // pattern is copied before the call returns.
                    let pattern = unsafe {
                        std::slice::from_raw_parts(pattern_addr as *const u8, pattern_size)
                    }
                    .to_vec();
                    let device = match queue {
                        Some(q) => q.device.clone(),
                        None => rt.device_of_pointer(ptr).clone(),
                    };
                    let alloc = rt.locate("Ptr", ptr, fill_size, &device, queue.is_some())?;
                    if fill_size == 0 {
                        return Ok(());
                    }
                    match queue {
                        None => device.imp.fill(ptr, &pattern, fill_size),
                        Some(q) => rt.enqueue_fill(q, ptr, alloc, pattern, fill_size),
                    }
                })
            })
        },
    )
}

const MEM_INFO_EXPECTED: &str = "an ol_mem_info_t: OL_MEM_INFO_DEVICE, BASE, SIZE or TYPE (0..3)";

/// The allocation is looked up before the key is: an unknown pointer is `NOT_FOUND`
/// whatever the key, as in LLVM.
fn mem_info(rt: &Runtime, ptr: *const c_void, key: u32, answer: info::Answer<'_>) -> Result<()> {
    let allocation = rt.allocation_of(ptr as usize)?;
    let key: MemInfo = args::enumeration(key, "PropName", MEM_INFO_EXPECTED)?;
    answer(&rt.mem_info(&allocation, key), &key)
}

/// Writes one property of the allocation holding `Ptr` (any address inside it).
#[no_mangle]
pub extern "C" fn olGetMemInfo(
    Ptr: *const c_void,
    PropName: ol_mem_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
) -> ol_result_t {
    get_mem_info(Ptr, PropName, PropSize, PropValue, null())
}

/// `olGetMemInfo` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetMemInfoWithCodeLoc(
    Ptr: *const c_void,
    PropName: ol_mem_info_raw_t,
    PropSize: usize,
    PropValue: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_mem_info(Ptr, PropName, PropSize, PropValue, CodeLocation)
}

fn get_mem_info(
    ptr: *const c_void,
    key: u32,
    size: usize,
    out: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    info::query(
        info::Keys::Mem,
        info::Subject::Pointer("Ptr", ptr),
        key,
        info::Asked::Value {
            prop_size: size,
            out,
        },
        loc,
        |rt, answer| mem_info(rt, ptr, key, answer),
    )
}

/// Writes the bytes `olGetMemInfo` needs for `PropName` to `PropSizeRet`.
#[no_mangle]
pub extern "C" fn olGetMemInfoSize(
    Ptr: *const c_void,
    PropName: ol_mem_info_raw_t,
    PropSizeRet: *mut usize,
) -> ol_result_t {
    get_mem_info_size(Ptr, PropName, PropSizeRet, null())
}

/// `olGetMemInfoSize` with the caller's source location.
#[no_mangle]
pub extern "C" fn olGetMemInfoSizeWithCodeLoc(
    Ptr: *const c_void,
    PropName: ol_mem_info_raw_t,
    PropSizeRet: *mut usize,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    get_mem_info_size(Ptr, PropName, PropSizeRet, CodeLocation)
}

fn get_mem_info_size(
    ptr: *const c_void,
    key: u32,
    out: *mut usize,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    info::query(
        info::Keys::Mem,
        info::Subject::Pointer("Ptr", ptr),
        key,
        info::Asked::Size(out),
        loc,
        |rt, answer| mem_info(rt, ptr, key, answer),
    )
}

/// Page-locks `Size` bytes of host memory at `Ptr` for fast transfers with `Device`;
/// `PinnedPtr` receives the address the device uses. Registering inside a registered
/// range is allowed (undo each once); a partial overlap is `OL_ERRC_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn olMemRegister(
    Device: ol_device_handle_t,
    Ptr: *mut c_void,
    Size: usize,
    Flags: ol_memory_register_flags_t,
    PinnedPtr: *mut *mut c_void,
) -> ol_result_t {
    mem_register(Device, Ptr, Size, Flags, PinnedPtr, null())
}

/// `olMemRegister` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemRegisterWithCodeLoc(
    Device: ol_device_handle_t,
    Ptr: *mut c_void,
    Size: usize,
    Flags: ol_memory_register_flags_t,
    PinnedPtr: *mut *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_register(Device, Ptr, Size, Flags, PinnedPtr, CodeLocation)
}

fn mem_register(
    device: ol_device_handle_t,
    ptr: *mut c_void,
    size: usize,
    flags: u32,
    out: *mut *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemRegister",
        loc,
        |ok| {
            format!(
                "Device={device:p}, Ptr={ptr:p}, Size={size}, Flags={flags:#x}, PinnedPtr={}",
                written_handle(out, ok)
            )
        },
        || {
            // `Flags` is reserved and, as in LLVM, not looked at: later versions define
            // flags, and code written for them must not fail here.
            args::with_runtime(|rt| {
                Runtime::check_nonzero_size(size)?;
                args::handle_given(device, "Device")?;
                let addr = args::non_null(ptr, "Ptr")?;
                let out = args::out_ptr(out, "PinnedPtr")?;
                let d = args::device(rt, device, "Device")?;
                *out = rt.mem_register(d, addr, size)? as *mut c_void;
                Ok(())
            })
        },
    )
}

/// Undoes one `olMemRegister` that returned `Ptr` as its `PinnedPtr`.
#[no_mangle]
pub extern "C" fn olMemUnregister(Device: ol_device_handle_t, Ptr: *mut c_void) -> ol_result_t {
    mem_unregister(Device, Ptr, null())
}

/// `olMemUnregister` with the caller's source location.
#[no_mangle]
pub extern "C" fn olMemUnregisterWithCodeLoc(
    Device: ol_device_handle_t,
    Ptr: *mut c_void,
    CodeLocation: *mut ol_code_location_t,
) -> ol_result_t {
    mem_unregister(Device, Ptr, CodeLocation)
}

fn mem_unregister(
    device: ol_device_handle_t,
    pinned: *mut c_void,
    loc: *const ol_code_location_t,
) -> ol_result_t {
    call(
        "olMemUnregister",
        loc,
        |_| format!("Device={device:p}, Ptr={pinned:p}"),
        || {
            args::with_runtime(|rt| {
                args::handle_given(device, "Device")?;
                let pinned = args::non_null(pinned, "Ptr")?;
                rt.mem_unregister(args::device(rt, device, "Device")?, pinned)
            })
        },
    )
}
