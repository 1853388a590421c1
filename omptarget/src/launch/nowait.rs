//! `nowait` target regions on a GPU, asynchronous as LLVM's libomptarget runs them.
//! libomp runs such a region as a task; when the task routine returns with an async
//! handle in the task (its `td_target_data.async_handle`), libomp keeps the task alive,
//! requeues it, and calls `__tgt_target_nowait_query` on the handle instead of the
//! routine, until the handle is cleared: only then is the task complete, so `depend`
//! and `taskwait` wait for the kernel and the copies back. Here the region's arguments
//! are mapped, the kernel is enqueued on a queue of the device's, and the handle is
//! the region in flight; the query ends it (copies back, releases) once the queue is
//! empty. Outside a task with a task team (no slot to poll) a region runs as `nowait`
//! never was. The host device's regions run to completion too, unless
//! `OFFLOAD_NOWAIT_ASYNC=1` asks for every device: its kernels need the cores a polling
//! helper thread would take.

use crate::abi::types::MapArg;
use crate::devices::outcome;
use crate::devices::registry;
use crate::launch::kernel::{launch_region, Launch, Launched};
use crate::mapping::transfer::Failed;
use crate::plugin::ol::{self, Device, Queue};
use crate::plugin::queue_pool;
use crate::report::policy::message;
use std::ffi::c_void;
use std::sync::LazyLock;

/// libomp's routines for a task's async handle, found at run time (this library does
/// not link libomp).
struct TaskApi {
    global_thread_num: unsafe extern "C" fn(*mut c_void) -> i32,
    has_task_team: unsafe extern "C" fn(i32) -> bool,
    async_handle_ptr: unsafe extern "C" fn(i32) -> *mut *mut c_void,
}

static TASK_API: LazyLock<Option<TaskApi>> = LazyLock::new(|| {
    let find = |name: &std::ffi::CStr| {
        // SAFETY: dlsym with a NUL-terminated name.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!f.is_null()).then_some(f)
    };
    let gtid = find(c"__kmpc_global_thread_num")?;
    let team = find(c"__kmpc_omp_has_task_team")?;
    let slot = find(c"__kmpc_omp_get_target_async_handle_ptr")?;
    // SAFETY: libomp's `kmp_int32 __kmpc_global_thread_num(ident_t *)`,
    // `bool __kmpc_omp_has_task_team(kmp_int32)` and
    // `void **__kmpc_omp_get_target_async_handle_ptr(kmp_int32)`.
    unsafe {
        Some(TaskApi {
            global_thread_num: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(*mut c_void) -> i32,
            >(gtid),
            has_task_team: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(i32) -> bool>(
                team,
            ),
            async_handle_ptr: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(i32) -> *mut *mut c_void,
            >(slot),
        })
    }
});

/// Whether `nowait` regions of every device go through queues (`OFFLOAD_NOWAIT_ASYNC=1`),
/// not only a GPU's. Read once.
pub fn on_every_device() -> bool {
    static EVERY: LazyLock<bool> =
        LazyLock::new(|| std::env::var("OFFLOAD_NOWAIT_ASYNC").is_ok_and(|v| v.trim() == "1"));
    *EVERY
}

/// The running task's empty async-handle slot, where libomp will poll; `None` outside
/// a task with a task team.
pub fn task_slot() -> Option<*mut *mut c_void> {
    let api = TASK_API.as_ref()?;
    // SAFETY: libomp's routines (see TaskApi), called on a thread of libomp's.
    unsafe {
        let gtid = (api.global_thread_num)(std::ptr::null_mut());
        if gtid < 0 || !(api.has_task_team)(gtid) {
            return None;
        }
        let slot = (api.async_handle_ptr)(gtid);
        (!slot.is_null() && (*slot).is_null()).then_some(slot)
    }
}

/// A region in flight: what its query finishes.
struct InFlight {
    launched: Launched,
    queue: Queue,
    device: Device,
    /// The construct's source location, for the failure's message.
    loc: usize,
}

/// Starts region `host_ptr` on `device` asynchronously and leaves it in `slot`; with
/// every queue of the device busy, runs it to completion.
pub(crate) fn start(
    slot: *mut *mut c_void,
    device: usize,
    host_ptr: usize,
    args: Vec<MapArg>,
    launch: Launch,
    loc: *mut c_void,
) -> Result<(), Failed> {
    let handle = registry::state()
        .copy_devices(device)
        .map(|d| d.device)
        .ok_or(Failed)?;
    let queue = queue_pool::take_queue(handle).map_err(|e| {
        message(&format!("error: {e}"));
        Failed
    })?;
    let Some(queue) = queue else {
        return launch_region(device, host_ptr, args, launch, None)?.finish();
    };
    match launch_region(device, host_ptr, args, launch, Some(&queue)) {
        Ok(launched) => {
            let in_flight = Box::new(InFlight {
                launched,
                queue,
                device: handle,
                loc: loc as usize,
            });
            // SAFETY: libomp's slot of the running task (task_slot), empty.
            unsafe { *slot = Box::into_raw(in_flight).cast() };
            Ok(())
        }
        Err(failed) => {
            let _ = ol::sync_queue(&queue);
            queue_pool::give_back(handle, queue);
            Err(failed)
        }
    }
}

/// libomp's poll of `slot`: while the region's queue has work, nothing; then the region
/// ends (copies back, releases) and the slot is cleared, which completes the task.
///
/// # Safety
/// `slot` is NULL or libomp's slot, holding NULL or what `start` left there.
pub(crate) unsafe fn query(slot: *mut *mut c_void) {
    if slot.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let handle = unsafe { *slot };
    if handle.is_null() {
        return;
    }
    {
        // SAFETY: made by `start` (Box::into_raw) and still in the slot.
        let in_flight = unsafe { &*handle.cast::<InFlight>() };
        if matches!(ol::queue_is_empty(&in_flight.queue), Ok(false)) {
            return;
        }
    }
    // SAFETY: as above; taken out of the slot at once, so it is freed once.
    let in_flight = unsafe {
        *slot = std::ptr::null_mut();
        Box::from_raw(handle.cast::<InFlight>())
    };
    let InFlight {
        launched,
        queue,
        device,
        loc,
    } = *in_flight;
    let done = ol::sync_queue(&queue);
    queue_pool::give_back(device, queue);
    let ok = match done {
        Ok(()) => launched.finish().is_ok(),
        Err(e) => {
            message(&format!("error: {e}"));
            message("error: Executing target region abort target.");
            drop(launched);
            false
        }
    };
    outcome::handle_outcome(ok, true, loc as *mut c_void);
}
