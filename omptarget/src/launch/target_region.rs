//! One target region from clang's kernel arguments: read the record (its version,
//! clauses, trip count), map the arguments, launch the kernel, or leave a `nowait`
//! region in flight, release, and end the construct as LLVM does.

use crate::abi::types::{implicit_dyn_ptr, map_args, KernelArgs, OFFLOAD_FAIL, OFFLOAD_SUCCESS};
use crate::devices::outcome;
use crate::devices::outcome::resolve_or_abort;
use crate::devices::registry::{self, Target};
use crate::launch::kernel::{launch_region, Launch, Launched};
use crate::launch::launch_plan::Request;
use crate::launch::nowait;
use crate::ompt::connect::callbacks;
use crate::ompt::events;
use crate::ompt::types::target_kind;
use crate::report::info;
use crate::report::policy::message;
use crate::report::profile;
use std::ffi::c_void;

/// `KernelArgsTy::Flags.NoWait`, its lowest bit.
const KERNEL_FLAG_NOWAIT: u64 = 1;

/// A target region as `__tgt_target_kernel` and its `nowait` form ask for it (the latter
/// may leave it in flight): map, launch, release, and the construct's outcome.
///
/// # Safety
/// As `__tgt_target_kernel`.
pub unsafe fn target_kernel(
    loc: *mut c_void,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut KernelArgs,
    nowait: bool,
) -> i32 {
    let device = match resolve_or_abort(device_id, loc) {
        Target::Device(device) => device,
        Target::Host => return OFFLOAD_FAIL,
    };
    if args.is_null() {
        return OFFLOAD_FAIL;
    }
    // SAFETY: clang's KernelArgsTy (the caller's promise); `version` is its first field
    // in every version.
    let version = unsafe { (*args).version };
    let with_dyn_ptr = match implicit_dyn_ptr(version) {
        Ok(dyn_ptr) => dyn_ptr,
        Err(e) => {
            message(&format!("error: {e}"));
            outcome::handle_outcome(false, true, loc);
            return OFFLOAD_FAIL;
        }
    };
    // SAFETY: a KernelArgsTy of a known version and its arrays (the caller's promise).
    let list = unsafe {
        let k = &*args;
        map_args(
            k.num_args as i32,
            k.arg_base_ptrs,
            k.arg_ptrs,
            k.arg_sizes,
            k.arg_types,
            k.arg_names,
            k.arg_mappers,
        )
    };
    let list = match list {
        Ok(list) => list,
        Err(e) => {
            message(&format!("error: {e}"));
            outcome::handle_outcome(false, true, loc);
            return OFFLOAD_FAIL;
        }
    };
    if info::enabled(info::kind::KERNEL_ARGS) {
        info::arguments(device, loc, "Entering OpenMP kernel", &list);
    }
    // Records before version 2 have no clauses, trip count or dynamic memory: the
    // call's arguments stand.
    // The record's flags say `nowait` too (clang calls __tgt_target_kernel in the
    // region's task with the NoWait bit set).
    let (teams, thread_limit, trip_count, dyn_shared, nowait) = if version >= 2 {
        // SAFETY: a version 2+ record has these fields (the caller's promise).
        let k = unsafe { &*args };
        (
            k.num_teams[0],
            k.thread_limit[0],
            k.tripcount,
            k.dyn_cgroup_mem,
            nowait || k.flags & KERNEL_FLAG_NOWAIT != 0,
        )
    } else {
        (
            num_teams.max(0) as u32,
            thread_limit.max(0) as u32,
            0,
            0,
            nowait,
        )
    };
    let blocks = if num_teams == -1 || teams == 0 {
        1
    } else {
        teams
    };
    // What the region asks of a GPU launch. A region without `teams` (the call's -1)
    // runs as one team, as LLVM sets it.
    let request = Request {
        num_teams: if num_teams == -1 { 1 } else { teams },
        thread_limit,
        trip_count,
    };
    let launch = Launch {
        with_dyn_ptr,
        blocks,
        request,
        dyn_shared,
    };
    let timed = profile::scope("Runtime: target exe", || {
        format!("NumTeams={num_teams};NumArgs={}", list.len())
    });
    // A GPU's `nowait` region in a task libomp can poll is left in flight (any
    // device's with OFFLOAD_NOWAIT_ASYNC=1).
    let slot = (nowait
        && (nowait::on_every_device() || registry::state().devices[device].gpu.is_some()))
    .then(nowait::task_slot)
    .flatten();
    if callbacks().is_some() {
        // A tool sees the images loaded before the region begins, as LLVM orders it.
        let _ = registry::state().load_images(device);
    }
    let ok = events::construct(target_kind::TARGET, device, || match slot {
        Some(slot) => nowait::start(slot, device, host_ptr as usize, list, launch, loc),
        None => {
            launch_region(device, host_ptr as usize, list, launch, None).and_then(Launched::finish)
        }
    })
    .is_ok();
    drop(timed);
    outcome::handle_outcome(ok, true, loc);
    if ok {
        OFFLOAD_SUCCESS
    } else {
        OFFLOAD_FAIL
    }
}
