//! One region's kernel launch: its arguments as the kernel takes them (device
//! addresses, literals, private copies), the launch through `olLaunchKernel` (on a GPU
//! with the kernel's launch environment and LLVM's grid), and what a finished launch
//! releases.

use crate::abi::types::{map_type as mt, MapArg};
use crate::devices::registry::{self};
use crate::launch::launch_plan::{self, Grid, Request};
use crate::launch::recording;
use crate::mapping::data;
use crate::mapping::info_lines;
use crate::mapping::table::MappingTable;
use crate::mapping::transfer;
use crate::mapping::transfer::{Devices, Failed};
use crate::ompt::events;
use crate::plugin::device_memory;
use crate::plugin::gpu_load::{self, GpuDevice};
use crate::plugin::kernel_env::{self, ExecMode, LAUNCH_ENV_SIZE};
use crate::plugin::ol;
use crate::plugin::rr_region;
use crate::report::info;
use crate::report::policy::{self, message};
use crate::report::profile;

/// A private copy (`firstprivate` of a non-scalar) made for one launch.
struct PrivateCopy {
    device_begin: usize,
}

/// The device address `host` stands for in a launch: inside (or, for a section that
/// reaches past it, overlapping) a mapping, its device copy; unmapped, the host address
/// itself (OpenMP 5.2: an unmapped pointer keeps its value, as if firstprivate).
/// Returns the address and the mapping's name (for LIBOMPTARGET_INFO).
fn device_address_for(
    table: &MappingTable,
    devs: Devices,
    host: usize,
    size: usize,
) -> Option<(usize, usize)> {
    info_lines::find_mapping(devs.number, table, host, size, false)
        .map(|(_, m)| (m.device_address(host), m.name))
}

/// A lambda's by-reference capture (clang marks it `PTR_AND_OBJ | LITERAL | IMPLICIT`,
/// member of the lambda object's entry): the device copy of the lambda must point at
/// the captured variable's device copy.
fn is_lambda_capture(arg: &MapArg) -> bool {
    let marks = mt::PTR_AND_OBJ | mt::LITERAL | mt::IMPLICIT;
    arg.map_type & marks == marks
}

/// The argument values of the launch, one pointer-sized slot each, as LLVM's host plugin
/// builds them: first the implicit `dyn_ptr` when the kernel takes one (kernel arguments
/// of version 3 on; no dynamic memory here, so NULL), then for each `TARGET_PARAM` entry
/// the literal value or the device address of its base (device begin + (base - begin)).
fn kernel_values(
    table: &MappingTable,
    devs: Devices,
    args: &[MapArg],
    with_dyn_ptr: bool,
    privates: &mut Vec<PrivateCopy>,
) -> Result<Vec<usize>, Failed> {
    let mut values = if with_dyn_ptr {
        vec![0usize]
    } else {
        Vec::new()
    };
    // Where each entry's value went in `values` (lambda captures find their lambda).
    let mut slots: Vec<Option<usize>> = vec![None; args.len()];
    for (index, arg) in args.iter().enumerate() {
        if !arg.has(mt::TARGET_PARAM) {
            if is_lambda_capture(arg) {
                let parent = arg
                    .parent_index()
                    .and_then(|p| Some((p, slots.get(p).copied()??)));
                if let Some((parent, slot)) = parent {
                    let lambda_device = values[slot];
                    let field =
                        lambda_device.wrapping_add(arg.base.wrapping_sub(args[parent].begin));
                    if let Some((target, name)) =
                        device_address_for(table, devs, arg.begin, arg.size)
                    {
                        transfer::write_device_pointer(devs, field, target, name)?;
                    }
                }
            }
            continue;
        }
        let value = if arg.has(mt::LITERAL) {
            arg.base
        } else if arg.has(mt::PRIVATE) {
            let offset = arg.base.wrapping_sub(arg.begin);
            let copy =
                device_memory::alloc(devs.device, arg.size.max(1)).map_err(transfer::report)?;
            privates.push(PrivateCopy { device_begin: copy });
            if arg.has(mt::TO) {
                transfer::to_device(devs, copy, arg.begin, arg.size, 0)?;
            }
            copy.wrapping_add(offset)
        } else {
            let base = if arg.has(mt::PTR_AND_OBJ) {
                // SAFETY: a PTR_AND_OBJ base is the address of a host pointer variable.
                unsafe { (arg.base as *const usize).read_unaligned() }
            } else {
                arg.base
            };
            device_address_for(table, devs, arg.begin, arg.size)
                .map_or(arg.begin, |(address, _)| address)
                .wrapping_add(base.wrapping_sub(arg.begin))
        };
        slots[index] = Some(values.len());
        values.push(value);
    }
    Ok(values)
}

/// How a region is launched: whether its kernel takes `dyn_ptr` first, the team count
/// the host convention reports, and what the region asks of a GPU launch.
#[derive(Clone, Copy)]
pub(crate) struct Launch {
    pub with_dyn_ptr: bool,
    pub blocks: u32,
    pub request: Request,
    /// `ompx_dyn_cgroup_mem`: bytes of dynamic shared memory per team.
    pub dyn_shared: u32,
}

/// The `dyn_ptr` LLVM passes a kernel without cross-team reductions (all bits set: no
/// launch environment).
const NO_LAUNCH_ENV: usize = usize::MAX;

/// How one region runs on a GPU: its grid, mode and dynamic shared memory, and the device
/// memory its launch environment took (freed after the launch).
struct GpuLaunch {
    grid: Grid,
    mode: ExecMode,
    dyn_shared: usize,
    allocations: Vec<usize>,
}

impl GpuLaunch {
    /// Plans the launch of `region` on `gpu`; where the kernel does cross-team
    /// reductions, allocates its launch environment (counters zeroed) and buffer and puts
    /// its address first in `values` (else the no-environment value).
    fn prepare(
        gpu: &GpuDevice,
        devs: Devices,
        region: usize,
        launch: &Launch,
        values: &mut [usize],
    ) -> Result<GpuLaunch, Failed> {
        let env = gpu.kernels.get(&region).copied().ok_or_else(|| {
            message(&format!(
                "error: no kernel environment read for region 0x{region:016x}"
            ));
            Failed
        })?;
        let grid = launch_plan::plan(&env, &gpu.limits, launch.request);
        let mut planned = GpuLaunch {
            grid,
            mode: env.mode,
            dyn_shared: launch.dyn_shared.max(gpu_load::shared_memory_size()) as usize,
            allocations: Vec::new(),
        };
        if !launch.with_dyn_ptr || values.is_empty() {
            return Ok(planned);
        }
        let reduction = (env.reduction_data_size.max(0) as usize)
            .saturating_mul(env.reduction_buffer_length.max(0) as usize);
        if reduction == 0 {
            values[0] = NO_LAUNCH_ENV;
            return Ok(planned);
        }
        let buffer = device_memory::alloc(devs.device, reduction).map_err(transfer::report)?;
        planned.allocations.push(buffer);
        let env_block =
            device_memory::alloc(devs.device, LAUNCH_ENV_SIZE).map_err(transfer::report)?;
        planned.allocations.push(env_block);
        let bytes = kernel_env::launch_environment(buffer as u64);
        ol::memcpy(
            env_block,
            devs.device,
            bytes.as_ptr() as usize,
            devs.host,
            LAUNCH_ENV_SIZE,
        )
        .map_err(transfer::report)?;
        values[0] = env_block;
        Ok(planned)
    }
}

impl Drop for GpuLaunch {
    fn drop(&mut self) {
        for &allocation in &self.allocations {
            let _ = device_memory::free(allocation);
        }
    }
}

/// A region whose kernel was launched (on a queue, or run already): what releasing it
/// needs once the kernel is done.
pub(crate) struct Launched {
    device: usize,
    devs: Devices,
    args: Vec<MapArg>,
    privates: Vec<PrivateCopy>,
    gpu: Option<GpuLaunch>,
}

impl Launched {
    /// Frees the launch's own copies, then ends the region's mappings (copies back).
    pub(crate) fn finish(self) -> Result<(), Failed> {
        let Launched {
            device,
            devs,
            args,
            privates,
            gpu,
        } = self;
        for copy in privates {
            let _ = device_memory::free(copy.device_begin);
        }
        drop(gpu);
        let mut state = registry::state();
        data::end(&mut state.devices[device].table, devs, &args).inspect_err(|_| {
            message("error: Call to targetDataEnd failed, abort target.");
            message("error: Failed to process data after launching the kernel.");
        })
    }
}

/// Maps a region's arguments and launches its kernel: on `queue` (returning while it
/// runs), or to completion without one.
pub(crate) fn launch_region(
    device: usize,
    host_ptr: usize,
    args: Vec<MapArg>,
    launch: Launch,
    queue: Option<&ol::Queue>,
) -> Result<Launched, Failed> {
    let Launch {
        with_dyn_ptr,
        blocks,
        ..
    } = launch;
    let (devs, kernel, name) = {
        let mut state = registry::state();
        if let Err(e) = state.load_images(device) {
            message(&format!("error: {e}"));
            return Err(Failed);
        }
        let Some(devs) = state.copy_devices(device) else {
            message("error: liboffload has no host device to copy from");
            return Err(Failed);
        };
        let Some(kernel) = state.devices[device].kernels.get(&host_ptr).copied() else {
            message(&format!(
                "error: no kernel on device {device} for target region 0x{host_ptr:016x}"
            ));
            return Err(Failed);
        };
        let name = info::enabled(info::kind::PLUGIN_KERNEL)
            .then(|| state.entry_name(host_ptr).unwrap_or_default());
        (devs, kernel, name)
    };
    let mut privates = Vec::new();
    let values = {
        let mut state = registry::state();
        let table = &mut state.devices[device].table;
        if data::begin(table, devs, &args).is_err() {
            message("error: Call to targetDataBegin failed, abort target.");
            message("error: Failed to process data before launching the kernel.");
            return Err(Failed);
        }
        let values = kernel_values(table, devs, &args, with_dyn_ptr, &mut privates);
        // On a GPU: the grid by LLVM's rules, and the launch environment in front.
        match (values, state.devices[device].gpu.as_ref()) {
            (Ok(mut values), Some(gpu)) => {
                GpuLaunch::prepare(gpu, devs, host_ptr, &launch, &mut values)
                    .map(|gpu| (values, Some(gpu)))
            }
            (values, _) => values.map(|v| (v, None)),
        }
    };
    if let (Some(name), Ok((_, gpu))) = (&name, &values) {
        let (blocks, threads, mode) = match gpu {
            Some(g) => (g.grid.blocks, g.grid.threads, g.mode.name()),
            None => (blocks, 1, "Generic"),
        };
        info::plugin_line(
            device,
            &if policy::llvm_release() >= 22 {
                format!("Launching kernel {name} with [{blocks},1,1] blocks and [{threads},1,1] threads in {mode} mode")
            } else {
                format!(
                    "Launching kernel {name} with {blocks} blocks and {threads} threads in {mode} mode"
                )
            },
        );
    }
    // The launch runs without the registry lock, so other host threads can map meanwhile.
    let launched = values.and_then(|(values, gpu)| {
        let _timed = profile::scope("Kernel Target", || {
            format!("NumArguments={};NumTeams={blocks}", values.len())
        });
        let (grid, threads, dyn_shared) = match &gpu {
            Some(g) => (g.grid.blocks, g.grid.threads, g.dyn_shared),
            None => (1, 1, 0),
        };
        let recorded = recording::of_launch(
            device,
            host_ptr,
            &values,
            (grid, threads),
            launch.request.trip_count,
        );
        if let Some((region, record)) = &recorded {
            recording::before(region, record);
        }
        let submitted = events::Kernel {
            device,
            teams: launch.request.num_teams,
            granted: grid,
        };
        events::submit(submitted, queue, || {
            ol::launch_grid(
                queue,
                devs.device,
                kernel,
                ol::as_bytes(&values),
                [grid, 1, 1],
                [threads, 1, 1],
                dyn_shared,
            )
        })
        .and_then(|()| match (&recorded, queue) {
            // The output is what the kernel leaves: wait for it.
            (Some((region, record)), queue) => {
                queue.map_or(Ok(()), ol::sync_queue)?;
                let region = rr_region::of(region.device).unwrap_or(*region);
                recording::after(&region, &record.name);
                Ok(())
            }
            _ => Ok(()),
        })
        .map(|()| gpu)
        .map_err(|e| {
            message(&format!("error: {e}"));
            message("error: Executing target region abort target.");
            Failed
        })
    });
    match launched {
        Ok(gpu) => Ok(Launched {
            device,
            devs,
            args,
            privates,
            gpu,
        }),
        Err(failed) => {
            for copy in privates {
                let _ = device_memory::free(copy.device_begin);
            }
            Err(failed)
        }
    }
}
