//! The calls into liboffload. Every device operation of this crate goes through the C
//! API functions here (so `OFFLOAD_TRACE=1` shows them); each wrapper turns the
//! `ol_result_t` into a `Result` with liboffload's own error text.

use crate::report::boundary::boundary;
use offload::capi::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr::{null, null_mut};

pub type Result<T> = std::result::Result<T, String>;

/// A device handle. liboffload owns devices for the whole process, so the handle may be
/// copied and used from any thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device(pub ol_device_handle_t);
// SAFETY: device handles are process-wide, immutable from the caller's side, and
// liboffload's functions are thread-safe.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

/// A loaded program (one device image on one device).
#[derive(Clone, Copy, Debug)]
pub struct Program(pub ol_program_handle_t);
// SAFETY: a program handle stays valid until olDestroyProgram, which this crate only
// calls while holding the registry lock; liboffload's calls on it are thread-safe.
unsafe impl Send for Program {}
// SAFETY: as above.
unsafe impl Sync for Program {}

/// A kernel or global variable of a loaded program.
#[derive(Clone, Copy, Debug)]
pub struct Symbol(pub ol_symbol_handle_t);
// SAFETY: symbols live as long as their program (see `Program`).
unsafe impl Send for Symbol {}
// SAFETY: as above.
unsafe impl Sync for Symbol {}

fn check(result: ol_result_t, what: &str) -> Result<()> {
    offload::capi::errors::checked(result, what)
}

pub fn init() -> Result<()> {
    check(olInit(), "olInit")
}

unsafe extern "C" fn collect_device(device: ol_device_handle_t, user: *mut c_void) -> bool {
    boundary("collect_device", || {
        // SAFETY: `user` is the `Vec<Device>` `devices` passes, alive for the iteration.
        unsafe { (*user.cast::<Vec<Device>>()).push(Device(device)) };
        true
    })
}

/// Every device of every platform, in liboffload's order.
pub fn devices() -> Result<Vec<Device>> {
    let mut found: Vec<Device> = Vec::new();
    let user = (&mut found as *mut Vec<Device>).cast();
    check(
        olIterateDevices(Some(collect_device), user),
        "olIterateDevices",
    )?;
    Ok(found)
}

/// The backend (`OL_PLATFORM_BACKEND_*`) of `device`'s platform.
pub fn backend(device: Device) -> Result<u32> {
    let mut backend: u32 = 0;
    check(
        olGetPlatformInfo(
            platform_of(device)? as ol_platform_handle_t,
            OL_PLATFORM_INFO_BACKEND,
            std::mem::size_of::<u32>(),
            (&mut backend as *mut u32).cast(),
        ),
        "olGetPlatformInfo(BACKEND)",
    )?;
    Ok(backend)
}

/// Whether `device` belongs to the host platform (the CPU this process runs on).
pub fn is_host(device: Device) -> Result<bool> {
    Ok(backend(device)? == OL_PLATFORM_BACKEND_HOST)
}

/// Whether `device` is a remote device (served by another process over MPI).
pub fn is_remote(device: Device) -> Result<bool> {
    Ok(backend(device)? == OL_PLATFORM_BACKEND_MPI)
}

/// The device's platform handle (devices of one platform share it).
pub fn platform_of(device: Device) -> Result<usize> {
    let mut platform: ol_platform_handle_t = null_mut();
    check(
        olGetDeviceInfo(
            device.0,
            OL_DEVICE_INFO_PLATFORM,
            std::mem::size_of::<ol_platform_handle_t>(),
            (&mut platform as *mut ol_platform_handle_t).cast(),
        ),
        "olGetDeviceInfo(PLATFORM)",
    )?;
    Ok(platform as usize)
}

/// The device's unique identifier (`OL_DEVICE_INFO_UID`), e.g. for OpenMP 6.0's
/// `omp_get_uid_from_device`.
pub fn device_uid(device: Device) -> Result<String> {
    let mut size = 0usize;
    check(
        olGetDeviceInfoSize(device.0, OL_DEVICE_INFO_UID, &mut size),
        "olGetDeviceInfoSize(UID)",
    )?;
    let mut bytes = vec![0u8; size.max(1)];
    check(
        olGetDeviceInfo(
            device.0,
            OL_DEVICE_INFO_UID,
            bytes.len(),
            bytes.as_mut_ptr().cast(),
        ),
        "olGetDeviceInfo(UID)",
    )?;
    let text = CStr::from_bytes_until_nul(&bytes).map_err(|_| "UID without a NUL".to_string())?;
    Ok(text.to_string_lossy().into_owned())
}

pub fn is_valid_binary(device: Device, image: &[u8]) -> Result<bool> {
    let mut valid = false;
    check(
        olIsValidBinary(device.0, image.as_ptr().cast(), image.len(), &mut valid),
        "olIsValidBinary",
    )?;
    Ok(valid)
}

pub fn create_program(device: Device, image: &[u8]) -> Result<Program> {
    let mut program: ol_program_handle_t = null_mut();
    check(
        olCreateProgram(device.0, image.as_ptr().cast(), image.len(), &mut program),
        "olCreateProgram",
    )?;
    Ok(Program(program))
}

pub fn destroy_program(program: Program) -> Result<()> {
    check(olDestroyProgram(program.0), "olDestroyProgram")
}

pub fn shut_down() -> Result<()> {
    check(olShutDown(), "olShutDown")
}

pub fn kernel(program: Program, name: &str) -> Result<Symbol> {
    symbol(program, name, OL_SYMBOL_KIND_KERNEL)
}

fn symbol(program: Program, name: &str, kind: u32) -> Result<Symbol> {
    let (result, symbol) = get_symbol(program, name, kind)?;
    check(result, &format!("olGetSymbol({name})"))?;
    Ok(symbol)
}

/// `olGetSymbol` as it answers: its result, and the symbol when that is success.
fn get_symbol(program: Program, name: &str, kind: u32) -> Result<(ol_result_t, Symbol)> {
    let c_name = CString::new(name).map_err(|_| format!("symbol name {name:?} has a NUL"))?;
    let mut symbol: ol_symbol_handle_t = null_mut();
    let result = olGetSymbol(program.0, c_name.as_ptr(), kind, &mut symbol);
    Ok((result, Symbol(symbol)))
}

/// A global variable's `OL_SYMBOL_INFO_GLOBAL_VARIABLE_*` property (its address or size).
fn variable_info(symbol: Symbol, key: u32, what: &str) -> Result<usize> {
    let mut value = 0usize;
    check(
        olGetSymbolInfo(
            symbol.0,
            key,
            std::mem::size_of::<usize>(),
            (&mut value as *mut usize).cast(),
        ),
        what,
    )?;
    Ok(value)
}

/// The device address of the global variable `name` of `program`.
pub fn global_address(program: Program, name: &str) -> Result<usize> {
    let symbol = symbol(program, name, OL_SYMBOL_KIND_GLOBAL_VARIABLE)?;
    variable_info(
        symbol,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
        "olGetSymbolInfo(GLOBAL_VARIABLE_ADDRESS)",
    )
}

/// The device address and size of the global variable `name` of `program`; `None` when
/// the program has no such global.
pub fn global_info(program: Program, name: &str) -> Result<Option<(usize, usize)>> {
    let (result, symbol) = get_symbol(program, name, OL_SYMBOL_KIND_GLOBAL_VARIABLE)?;
    // SAFETY: a non-NULL result points to liboffload's interned error.
    if !result.is_null() && unsafe { (*result).Code } == OL_ERRC_NOT_FOUND {
        return Ok(None);
    }
    check(result, &format!("olGetSymbol({name})"))?;
    let address = variable_info(
        symbol,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
        "olGetSymbolInfo(GLOBAL_VARIABLE_ADDRESS)",
    )?;
    let size = variable_info(
        symbol,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE,
        "olGetSymbolInfo(GLOBAL_VARIABLE_SIZE)",
    )?;
    Ok(Some((address, size)))
}

pub fn alloc(device: Device, size: usize) -> Result<usize> {
    alloc_kind(device, OL_ALLOC_TYPE_DEVICE, size)
}

/// `olMemAlloc` of one kind: `OL_ALLOC_TYPE_DEVICE`, `_HOST` or `_MANAGED`.
pub fn alloc_kind(device: Device, kind: u32, size: usize) -> Result<usize> {
    let mut ptr: *mut c_void = null_mut();
    check(olMemAlloc(device.0, kind, size, &mut ptr), "olMemAlloc")?;
    Ok(ptr as usize)
}

/// Device memory at exactly `at` (`olMemAllocAt`, our extension): a replay's memory
/// where it was recorded.
pub fn alloc_at(device: Device, size: usize, at: usize) -> Result<usize> {
    let mut ptr: *mut c_void = null_mut();
    check(
        olMemAllocAt(
            device.0,
            OL_ALLOC_TYPE_DEVICE,
            size,
            at as *mut c_void,
            &mut ptr,
        ),
        "olMemAllocAt",
    )?;
    Ok(ptr as usize)
}

/// Fills `size` bytes at `ptr` (memory of any device) with `byte`, synchronously.
pub fn fill(ptr: usize, byte: u8, size: usize) -> Result<()> {
    if size == 0 {
        return Ok(());
    }
    check(
        olMemFill(
            null_mut(),
            ptr as *mut c_void,
            1,
            (&byte as *const u8).cast(),
            size,
        ),
        "olMemFill",
    )
}

/// Page-locks `size` host bytes at `ptr` for `device`; the address the device uses.
pub fn register(device: Device, ptr: usize, size: usize) -> Result<usize> {
    let mut pinned: *mut c_void = null_mut();
    check(
        olMemRegister(device.0, ptr as *mut c_void, size, 0, &mut pinned),
        "olMemRegister",
    )?;
    Ok(pinned as usize)
}

/// Undoes one `register` that returned `pinned`.
pub fn unregister(device: Device, pinned: usize) -> Result<()> {
    check(
        olMemUnregister(device.0, pinned as *mut c_void),
        "olMemUnregister",
    )
}

/// A fixed-size device property (`u32`, `u64`, an enum) read with `olGetDeviceInfo`.
pub fn device_info<T: Copy + Default>(device: Device, key: u32) -> Result<T> {
    read_info("olGetDeviceInfo", |size, out| {
        olGetDeviceInfo(device.0, key, size, out)
    })
}

/// A fixed-size property of type `T`, read by `get(size, out)` (an `ol*Info` call named
/// `what`).
fn read_info<T: Copy + Default>(
    what: &str,
    get: impl FnOnce(usize, *mut c_void) -> ol_result_t,
) -> Result<T> {
    let mut value = T::default();
    check(
        get(std::mem::size_of::<T>(), (&mut value as *mut T).cast()),
        what,
    )?;
    Ok(value)
}

/// A string device property (name, vendor, driver version).
pub fn device_info_string(device: Device, key: u32) -> Result<String> {
    let mut size = 0usize;
    check(
        olGetDeviceInfoSize(device.0, key, &mut size),
        "olGetDeviceInfoSize",
    )?;
    let mut bytes = vec![0u8; size.max(1)];
    check(
        olGetDeviceInfo(device.0, key, bytes.len(), bytes.as_mut_ptr().cast()),
        "olGetDeviceInfo",
    )?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

pub fn free(ptr: usize) -> Result<()> {
    check(olMemFree(ptr as *mut c_void), "olMemFree")
}

/// A synchronous copy of `size` bytes (NULL queue).
pub fn memcpy(dst: usize, dst_dev: Device, src: usize, src_dev: Device, size: usize) -> Result<()> {
    if size == 0 {
        return Ok(());
    }
    check(
        olMemcpy(
            null_mut(),
            dst as *mut c_void,
            dst_dev.0,
            src as *const c_void,
            src_dev.0,
            size,
        ),
        "olMemcpy",
    )
}

/// Runs `kernel` once, synchronously, with one pointer-sized value per argument (LLVM's
/// host-plugin convention, which the unmarked functions of clang's host images follow).
pub fn launch(device: Device, kernel: Symbol, args: &[usize]) -> Result<()> {
    launch_grid(None, device, kernel, as_bytes(args), [1; 3], [1; 3], 0)
}

/// Pointer-sized argument values as the byte buffer `olLaunchKernel` takes.
pub fn as_bytes(values: &[usize]) -> &[u8] {
    // SAFETY: the same memory, read as bytes (any bit pattern is a valid u8); the length
    // is the slice's size in bytes and the lifetime is the input's.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

/// Runs `kernel` on a grid of `blocks` teams of `threads` threads (each `[x, y, z]`),
/// `args` its parameter bytes laid out as the kernel takes them: to completion, or
/// enqueued on `queue`.
pub fn launch_grid(
    queue: Option<&Queue>,
    device: Device,
    kernel: Symbol,
    args: &[u8],
    blocks: [u32; 3],
    threads: [u32; 3],
    dyn_shared: usize,
) -> Result<()> {
    let size = size_args(blocks, threads, dyn_shared);
    let data: *const c_void = if args.is_empty() {
        null()
    } else {
        args.as_ptr().cast()
    };
    check(
        olLaunchKernel(
            queue.map_or(null_mut(), |q| q.0),
            device.0,
            kernel.0,
            data,
            args.len(),
            &size,
        ),
        "olLaunchKernel",
    )
}

/// `launch_grid` (synchronous) with arguments that are the kernel's parameters as a C
/// struct, so the host device calls the kernel with the C calling convention
/// (`OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS`; GPUs take their arguments so anyway).
pub fn launch_c_parameters(
    device: Device,
    kernel: Symbol,
    args: &[u8],
    blocks: [u32; 3],
    threads: [u32; 3],
    dyn_shared: usize,
) -> Result<()> {
    let size = size_args(blocks, threads, dyn_shared);
    check(
        launch_now_with_args(device.0, kernel.0, args, &size, true),
        "olLaunchKernelWithProperties",
    )
}

/// A launch's grid as `olLaunchKernel` takes it.
fn size_args(
    blocks: [u32; 3],
    threads: [u32; 3],
    dyn_shared: usize,
) -> ol_kernel_launch_size_args_t {
    let dims = |[x, y, z]: [u32; 3]| ol_dimensions_t { x, y, z };
    ol_kernel_launch_size_args_t {
        Dimensions: if blocks[2] > 1 || threads[2] > 1 {
            3
        } else if blocks[1] > 1 || threads[1] > 1 {
            2
        } else {
            1
        },
        NumGroups: dims(blocks),
        GroupSize: dims(threads),
        DynSharedMemory: dyn_shared,
    }
}

/// Whether `ptr` lies in an allocation liboffload made (of any device).
pub fn is_allocation(ptr: usize) -> bool {
    let mut base: *mut c_void = null_mut();
    check(
        olGetMemInfo(
            ptr as *const c_void,
            OL_MEM_INFO_BASE,
            std::mem::size_of::<*mut c_void>(),
            (&mut base as *mut *mut c_void).cast(),
        ),
        "olGetMemInfo(BASE)",
    )
    .is_ok()
}

/// A queue of a device (interop objects hand its native queue to the program).
#[derive(Debug)]
pub struct Queue(pub ol_queue_handle_t);
// SAFETY: a queue handle stays valid until `destroy_queue`, which takes it by value;
// liboffload's calls on it are thread-safe.
unsafe impl Send for Queue {}

pub fn create_queue(device: Device) -> Result<Queue> {
    let mut queue = null_mut();
    check(olCreateQueue(device.0, &mut queue), "olCreateQueue")?;
    Ok(Queue(queue))
}

/// Waits for the queue's work, then ends the queue.
pub fn destroy_queue(queue: Queue) -> Result<()> {
    let synced = sync_queue(&queue);
    check(olDestroyQueue(queue.0), "olDestroyQueue").and(synced)
}

/// Waits for the queue's work: the first failure of it since the last wait.
pub fn sync_queue(queue: &Queue) -> Result<()> {
    check(olSyncQueue(queue.0), "olSyncQueue")
}

/// A fixed-size queue property read with `olGetQueueInfo`.
fn queue_info<T: Copy + Default>(queue: &Queue, key: u32) -> Result<T> {
    read_info("olGetQueueInfo", |size, out| {
        olGetQueueInfo(queue.0, key, size, out)
    })
}

/// Whether the queue has no work pending (an error: the queue stopped on a failure).
pub fn queue_is_empty(queue: &Queue) -> Result<bool> {
    queue_info(queue, OL_QUEUE_INFO_EMPTY)
}

/// The vendor's queue under `queue` (`OL_QUEUE_INFO_NATIVE_HANDLE`).
pub fn native_queue(queue: &Queue) -> Result<usize> {
    queue_info(queue, OL_QUEUE_INFO_NATIVE_HANDLE)
}

/// An event of a queue: its completion time, as the device measures it, is what OMPT's
/// trace records carry.
#[derive(Debug)]
pub struct Event(pub ol_event_handle_t);
// SAFETY: an event handle stays valid until `destroy_event`, which takes it by value;
// liboffload's calls on it are thread-safe.
unsafe impl Send for Event {}

/// An event that completes when the work enqueued on `queue` so far has.
pub fn create_event(queue: &Queue) -> Result<Event> {
    let mut event = null_mut();
    check(olCreateEvent(queue.0, &mut event), "olCreateEvent")?;
    Ok(Event(event))
}

/// Milliseconds from `start`'s completion to `end`'s (events of one device), waiting
/// for both.
pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
    let mut ms = 0.0f32;
    check(
        olGetEventElapsedTime(start.0, end.0, &mut ms),
        "olGetEventElapsedTime",
    )?;
    Ok(ms)
}

/// Waits for the event's work.
pub fn sync_event(event: &Event) -> Result<()> {
    check(olSyncEvent(event.0), "olSyncEvent")
}

pub fn destroy_event(event: Event) -> Result<()> {
    check(olDestroyEvent(event.0), "olDestroyEvent")
}

/// Whether the event's work is done, without waiting.
pub fn event_is_complete(event: &Event) -> Result<bool> {
    read_info("olGetEventInfo(IS_COMPLETE)", |size, out| {
        olGetEventInfo(event.0, OL_EVENT_INFO_IS_COMPLETE, size, out)
    })
}
