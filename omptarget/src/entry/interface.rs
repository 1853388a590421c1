//! The `__tgt_*` entry points for registration and data mapping (`target data`,
//! `target enter/exit data`, `target update`), in all the forms clang 19 emits.
//! The `_nowait` forms run synchronously: libomp already wraps them in a task that
//! honours the `depend` clauses, so finishing before returning is a valid schedule.

use crate::abi::types::{map_args, BinDesc, MapArg};
use crate::devices::outcome;
use crate::devices::outcome::resolve_or_abort;
use crate::devices::registry::{self, Target};
use crate::mapping::data;
use crate::mapping::transfer;
use crate::mapping::transfer::Failed;
use crate::mapping::update;
use crate::ompt::connect::callbacks;
use crate::ompt::events;
use crate::ompt::types::target_kind;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::c_void;

/// Registers a binary's images and entries (clang's constructor calls this first).
///
/// # Safety
/// `desc` is clang's descriptor, alive until `__tgt_unregister_lib`.
#[no_mangle]
pub unsafe extern "C" fn __tgt_register_lib(desc: *mut BinDesc) {
    boundary("__tgt_register_lib", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { registry::register(desc) }
    })
}

/// Forgets a binary (clang's atexit handler calls this).
#[no_mangle]
pub extern "C" fn __tgt_unregister_lib(desc: *mut BinDesc) {
    boundary("__tgt_unregister_lib", || {
        registry::unregister(desc as usize);
    })
}

/// Nothing to do: liboffload initializes its backends on the first registration.
#[no_mangle]
pub extern "C" fn __tgt_init_all_rtls() {
    boundary("__tgt_init_all_rtls", || {})
}

/// LLVM 19 removed this function and only says so; so do we, with its words.
#[no_mangle]
pub extern "C" fn __tgt_register_requires(_flags: i64) {
    boundary("__tgt_register_requires", || {
        message("message: The __tgt_register_requires function has been removed. Old OpenMP requirements will not be handled");
    })
}

/// LLVM 22's libomp calls this at its synchronisation points (taskwait, barrier) so that
/// libomptarget can finish the work of interop objects owned by the task. This layer
/// creates no interop objects and finishes every construct before returning, so there is
/// never anything to wait for.
#[no_mangle]
pub extern "C" fn __tgt_target_sync(
    _loc: *mut c_void,
    _gtid: i32,
    _current_task: *mut c_void,
    _event: *mut c_void,
) {
    boundary("__tgt_target_sync", || {})
}

/// A trip-count hint for the next launch's grid; a host launch runs the region once,
/// so the hint changes nothing.
#[no_mangle]
pub extern "C" fn __kmpc_push_target_tripcount(_device_id: i64, _loop_tripcount: u64) {
    boundary("__kmpc_push_target_tripcount", || {})
}

/// As `__kmpc_push_target_tripcount`.
#[no_mangle]
pub extern "C" fn __kmpc_push_target_tripcount_mapper(
    _loc: *mut c_void,
    _device_id: i64,
    _loop_tripcount: u64,
) {
    boundary("__kmpc_push_target_tripcount_mapper", || {})
}

#[derive(Clone, Copy)]
enum Op {
    Begin,
    End,
    Update,
}

impl Op {
    /// How LIBOMPTARGET_INFO introduces the construct (LLVM's words, typo included).
    fn region(self, nowait: bool) -> &'static str {
        match (self, nowait) {
            (Op::Begin, false) => "Entering OpenMP data region with being_mapper",
            (Op::Begin, true) => "Entering OpenMP data region with being_nowait_mapper",
            (Op::End, false) => "Exiting OpenMP data region with end_mapper",
            (Op::End, true) => "Exiting OpenMP data region with end_nowait_mapper",
            (Op::Update, false) => "Updating data within the OpenMP data region with update_mapper",
            (Op::Update, true) => {
                "Updating data within the OpenMP data region with update_nowait_mapper"
            }
        }
    }
}

/// Which construct, where in the source, in which form.
#[derive(Clone, Copy)]
struct Construct {
    op: Op,
    loc: *const c_void,
    nowait: bool,
}

/// One data construct on `device_id`; returns the `use_device_ptr` results to write back.
/// A failure has been reported by the data operation itself; the construct's outcome
/// decides whether the program ends.
fn run(construct: Construct, device_id: i64, args: &[MapArg]) -> Vec<(usize, usize)> {
    let Construct { op, loc, nowait } = construct;
    let device = match resolve_or_abort(device_id, loc) {
        Target::Device(device) => device,
        Target::Host => return Vec::new(),
    };
    if crate::report::info::enabled(crate::report::info::kind::KERNEL_ARGS) {
        crate::report::info::arguments(device, loc, op.region(nowait), args);
    }
    let _timed =
        crate::report::profile::scope("Runtime: Data Copy", || format!("NumArgs={}", args.len()));
    let work = || {
        let mut state = registry::state();
        state
            .load_images(device)
            .map_err(transfer::report)
            .and_then(|()| {
                let devs = state.copy_devices(device).ok_or(Failed)?;
                let table = &mut state.devices[device].table;
                match op {
                    Op::Begin => data::begin(table, devs, args),
                    Op::End => data::end(table, devs, args).map(|()| Vec::new()),
                    Op::Update => update::update(table, devs, args).map(|()| Vec::new()),
                }
            })
    };
    let result = if callbacks().is_some() {
        // A tool sees the images loaded before the construct begins, as LLVM orders it.
        let _ = registry::state().load_images(device);
        let kind = match op {
            Op::Begin => target_kind::ENTER_DATA,
            Op::End => target_kind::EXIT_DATA,
            Op::Update => target_kind::UPDATE,
        };
        events::construct(kind, device, work)
    } else {
        work()
    };
    outcome::handle_outcome(result.is_ok(), true, loc);
    result.unwrap_or_default()
}

/// Reads the arrays, runs `op` and writes `use_device_ptr` results into `bases`.
///
/// # Safety
/// The arrays hold `arg_num` elements each (NULL for `names` and `mappers`: none).
#[allow(clippy::too_many_arguments)]
unsafe fn data_op(
    construct: Construct,
    device_id: i64,
    arg_num: i32,
    bases: *mut *mut c_void,
    args: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) {
    // SAFETY: the caller's promise, passed on.
    let list = match unsafe { map_args(arg_num, bases, args, sizes, types, names, mappers) } {
        Ok(list) => list,
        Err(e) => {
            message(&format!("error: {e}"));
            outcome::handle_outcome(false, true, construct.loc);
            return;
        }
    };
    for (index, device_base) in run(construct, device_id, &list) {
        // SAFETY: `index < arg_num`, inside the caller's base array.
        unsafe { *bases.add(index) = device_base as *mut c_void };
    }
}

macro_rules! data_entry_points {
    ($op:expr, $plain:ident, $nowait:ident, $mapper:ident, $nowait_mapper:ident) => {
        /// The data construct (deprecated form, without mappers).
        ///
        /// # Safety
        /// clang's argument arrays, `arg_num` elements each.
        #[no_mangle]
        pub unsafe extern "C" fn $plain(
            device_id: i64,
            arg_num: i32,
            bases: *mut *mut c_void,
            args: *mut *mut c_void,
            sizes: *mut i64,
            types: *mut i64,
        ) {
            boundary(stringify!($plain), || {
                // SAFETY: the caller's promise, passed on.
                unsafe {
                    data_op(
                        Construct {
                            op: $op,
                            loc: std::ptr::null(),
                            nowait: false,
                        },
                        device_id,
                        arg_num,
                        bases,
                        args,
                        sizes,
                        types,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    )
                }
            })
        }

        /// The `nowait` form of the deprecated entry point (run synchronously).
        ///
        /// # Safety
        /// As the synchronous form.
        #[no_mangle]
        pub unsafe extern "C" fn $nowait(
            device_id: i64,
            arg_num: i32,
            bases: *mut *mut c_void,
            args: *mut *mut c_void,
            sizes: *mut i64,
            types: *mut i64,
            _dep_num: i32,
            _dep_list: *mut c_void,
            _noalias_dep_num: i32,
            _noalias_dep_list: *mut c_void,
        ) {
            boundary(stringify!($nowait), || {
                // SAFETY: the caller's promise, passed on.
                unsafe { $plain(device_id, arg_num, bases, args, sizes, types) }
            })
        }

        /// The data construct, as clang 19 emits it.
        ///
        /// # Safety
        /// clang's argument arrays, `arg_num` elements each.
        #[no_mangle]
        pub unsafe extern "C" fn $mapper(
            loc: *mut c_void,
            device_id: i64,
            arg_num: i32,
            bases: *mut *mut c_void,
            args: *mut *mut c_void,
            sizes: *mut i64,
            types: *mut i64,
            names: *mut *mut c_void,
            mappers: *mut *mut c_void,
        ) {
            boundary(stringify!($mapper), || {
                // SAFETY: the caller's promise, passed on.
                unsafe {
                    data_op(
                        Construct {
                            op: $op,
                            loc,
                            nowait: false,
                        },
                        device_id,
                        arg_num,
                        bases,
                        args,
                        sizes,
                        types,
                        names,
                        mappers,
                    )
                }
            })
        }

        /// The `nowait` form (run synchronously; libomp's task orders it).
        ///
        /// # Safety
        /// As the synchronous form.
        #[no_mangle]
        pub unsafe extern "C" fn $nowait_mapper(
            loc: *mut c_void,
            device_id: i64,
            arg_num: i32,
            bases: *mut *mut c_void,
            args: *mut *mut c_void,
            sizes: *mut i64,
            types: *mut i64,
            names: *mut *mut c_void,
            mappers: *mut *mut c_void,
            _dep_num: i32,
            _dep_list: *mut c_void,
            _noalias_dep_num: i32,
            _noalias_dep_list: *mut c_void,
        ) {
            boundary(stringify!($nowait_mapper), || {
                // SAFETY: the caller's promise, passed on.
                unsafe {
                    data_op(
                        Construct {
                            op: $op,
                            loc,
                            nowait: true,
                        },
                        device_id,
                        arg_num,
                        bases,
                        args,
                        sizes,
                        types,
                        names,
                        mappers,
                    )
                }
            })
        }
    };
}

data_entry_points!(
    Op::Begin,
    __tgt_target_data_begin,
    __tgt_target_data_begin_nowait,
    __tgt_target_data_begin_mapper,
    __tgt_target_data_begin_nowait_mapper
);
data_entry_points!(
    Op::End,
    __tgt_target_data_end,
    __tgt_target_data_end_nowait,
    __tgt_target_data_end_mapper,
    __tgt_target_data_end_nowait_mapper
);
data_entry_points!(
    Op::Update,
    __tgt_target_data_update,
    __tgt_target_data_update_nowait,
    __tgt_target_data_update_mapper,
    __tgt_target_data_update_nowait_mapper
);
