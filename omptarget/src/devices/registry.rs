//! Registered binaries and the OpenMP devices: `__tgt_register_lib` records a binary's
//! images and entries; an OpenMP device is a liboffload device that accepts one of the
//! registered images (LLVM's rule too: a plugin's devices count once it has an image
//! for them). A device loads its image lazily, on the first construct that needs it.

use crate::abi::entries::{self, Entry};
use crate::abi::types::{entry_flags, requirements, BinDesc};
use crate::mapping::table::{Mapping, MappingTable};
use crate::mapping::transfer::Devices;
use crate::plugin::device_memory;
use crate::plugin::gpu_load::GpuDevice;
use crate::plugin::ol::{self, Device, Program, Symbol};
use crate::plugin::rr_region;
use crate::report::policy::{self, Policy};
use offload::plugin::foundation::int_hash::IntMap;
use parking_lot::{Mutex, MutexGuard};
use std::mem::ManuallyDrop;
use std::sync::LazyLock;

impl Entry {
    /// A target region's outlined function (clang's kernels have no size and no flags).
    fn is_kernel(&self) -> bool {
        self.size == 0 && self.flags == 0
    }

    /// A `declare target` variable: its device copy, or for a `link` variable the device
    /// pointer through which the device reaches it (mapped like any global, so that
    /// mapping the variable attaches that pointer). Indirect functions are not data.
    pub fn is_global(&self) -> bool {
        self.size > 0 && self.flags & entry_flags::INDIRECT == 0
    }

    /// A function declared `indirect`: its global holds the device's address of it.
    fn is_indirect(&self) -> bool {
        self.size > 0 && self.flags & entry_flags::INDIRECT != 0
    }
}

/// LLVM's host plugin offers four devices, each with its own copy of the program and
/// its own mapping table; programs (and LLVM's tests) count on that, so the host device
/// is offered as four OpenMP devices too.
const OPENMP_DEVICES_PER_HOST: usize = 4;

/// A registered binary: its images (bytes that live in the program's own data, valid
/// until it unregisters) and its entries.
pub struct Library {
    pub desc: usize,
    pub images: Vec<&'static [u8]>,
    pub entries: Vec<Entry>,
}

/// One OpenMP device: the liboffload device, its mapping table and what it has loaded.
pub struct OmpDevice {
    pub handle: Device,
    pub table: MappingTable,
    /// Programs loaded from each library (keyed by descriptor address).
    pub programs: IntMap<usize, Program>,
    /// Kernels by the region ID (host entry address) `__tgt_target_kernel` receives.
    pub kernels: IntMap<usize, Symbol>,
    /// On a GPU: its launch limits and kernel environments (`None`: the host
    /// convention, one call runs the whole region).
    pub gpu: Option<GpuDevice>,
}

#[derive(Default)]
pub struct State {
    pub initialized: bool,
    /// The host platform's device: the side of every copy from or to host memory.
    pub host: Option<Device>,
    /// Every liboffload device, in its order (candidates for OpenMP devices).
    all: Vec<Device>,
    pub devices: Vec<OmpDevice>,
    pub libraries: Vec<Library>,
    /// `OMP_REQ_*` flags the registered programs asked for.
    pub requirements: u64,
    /// The first requires entry's flags, which later ones must agree with (requires.rs).
    pub requires_first: u64,
}

/// Whether `device` can run a program that `requires unified_shared_memory`: a remote
/// device (another process, often another node) cannot reach the application's memory
/// at its addresses, so it is refused as LLVM refuses a device that lacks a required
/// capability, and the program's regions run where LLVM would run them (another
/// device, or the host).
fn shares_host_memory(device: Device) -> bool {
    if !ol::is_remote(device).unwrap_or(false) {
        return true;
    }
    if crate::report::info::enabled(u32::MAX) {
        crate::report::policy::message(
            "message: a remote device is not used: the program requires unified_shared_memory, which a device in another process cannot give",
        );
    }
    false
}

/// Whether `OFFLOAD_PLATFORMS` is unset or empty (every backend) or names the host
/// (liboffload reads the list and refuses a bad one at `olInit`; only the host's
/// presence in it matters here).
/// What OMPT's `device_initialize` calls a device: its name, as liboffload reports it.
fn device_kind(device: Device) -> String {
    ol::device_info_string(device, offload::capi::OL_DEVICE_INFO_NAME).unwrap_or_default()
}

fn host_platform_requested() -> bool {
    match std::env::var("OFFLOAD_PLATFORMS") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .any(|name| name.trim().eq_ignore_ascii_case("host")),
        _ => true,
    }
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));

/// The registry, locked. While this thread holds it, the OMPT events it causes wait
/// (a tool may call the OpenMP API from a callback); letting it go delivers them.
pub fn state() -> StateGuard {
    let guard = STATE.lock();
    crate::ompt::events::hold();
    StateGuard(ManuallyDrop::new(guard))
}

pub struct StateGuard(ManuallyDrop<MutexGuard<'static, State>>);

impl Drop for StateGuard {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.0) };
        crate::ompt::events::let_go();
    }
}

impl std::ops::Deref for StateGuard {
    type Target = State;
    fn deref(&self) -> &State {
        &self.0
    }
}

impl std::ops::DerefMut for StateGuard {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.0
    }
}

impl State {
    fn ensure_initialized(&mut self) {
        if self.initialized {
            return;
        }
        self.initialized = true;
        let found = ol::init().and_then(|()| ol::devices());
        match found {
            Ok(devices) => {
                self.host = devices
                    .iter()
                    .copied()
                    .find(|d| ol::is_host(*d).unwrap_or(false));
                // The host platform is always there (every copy has it on one side), but
                // it runs regions only when `OFFLOAD_PLATFORMS` names it or is unset: a
                // job that asks for remote devices alone gets them as devices 0, 1, ...
                let host_offered = host_platform_requested();
                self.all = devices
                    .into_iter()
                    .filter(|d| host_offered || Some(*d) != self.host)
                    .collect();
            }
            Err(e) => policy::message(&format!("error: liboffload has no devices: {e}")),
        }
    }

    /// Adds the devices that accept one of `images` and are not OpenMP devices yet, in
    /// LLVM's order: image by image, as each image finds the devices that take it (a
    /// binary with a host image first numbers the host's devices first).
    fn add_devices_for(&mut self, images: &[&'static [u8]]) {
        let first_new = self.devices.len();
        let unified = self.requirements & requirements::UNIFIED_SHARED_MEMORY != 0;
        for image in images {
            for &candidate in &self.all {
                if self.devices.iter().any(|d| d.handle == candidate)
                    || !ol::is_valid_binary(candidate, image).unwrap_or(false)
                    || (unified && !shares_host_memory(candidate))
                {
                    continue;
                }
                let copies = if Some(candidate) == self.host {
                    OPENMP_DEVICES_PER_HOST
                } else {
                    1
                };
                for _ in 0..copies {
                    crate::ompt::events::device_initialize(
                        self.devices.len(),
                        &device_kind(candidate),
                        candidate,
                    );
                    self.devices.push(OmpDevice {
                        handle: candidate,
                        table: MappingTable::default(),
                        programs: IntMap::default(),
                        kernels: IntMap::default(),
                        gpu: GpuDevice::probe(candidate, &self.all),
                    });
                }
            }
        }
        self.apply_requirements();
        crate::ompt::events::set_initial_device(self.devices.len());
        self.start_recording(first_new);
    }

    /// `LIBOMPTARGET_RECORD`: the devices from `first` on record their kernels from now
    /// on, as LLVM's start recording when a device is initialised.
    fn start_recording(&self, first: usize) {
        if !policy::env_flag("LIBOMPTARGET_RECORD", false) {
            return;
        }
        let save = policy::env_flag("LIBOMPTARGET_RR_SAVE_OUTPUT", false);
        for (number, dev) in self.devices.iter().enumerate().skip(first) {
            if let Err(e) = rr_region::reserve(dev.handle, rr_region::Mode::Record, 0, None, save) {
                policy::message(&format!(
                    "warning: LIBOMPTARGET_RECORD: device {number} does not record: {e}"
                ));
            }
        }
    }

    /// `requires unified_shared_memory`: unmapped data is used at its host address.
    fn apply_requirements(&mut self) {
        let unified = self.requirements & requirements::UNIFIED_SHARED_MEMORY != 0;
        for device in &mut self.devices {
            device.table.unified_memory = unified;
        }
    }

    /// The symbol name of the offload entry at `host_address` (a region's kernel).
    pub fn entry_name(&self, host_address: usize) -> Option<String> {
        self.libraries
            .iter()
            .flat_map(|l| &l.entries)
            .find(|e| e.host_address == host_address)
            .map(|e| e.name.clone())
    }

    /// LIBOMPTARGET_INFO's mapping tables of every device, after a construct.
    pub fn dump_tables(&self, loc: *const std::ffi::c_void) {
        for (number, device) in self.devices.iter().enumerate() {
            crate::mapping::info_lines::dump_table(number, &device.table, loc);
        }
    }

    /// The number of OpenMP devices (0 when offloading is disabled).
    pub fn num_devices(&self) -> usize {
        if policy::requested() == Policy::Disabled {
            0
        } else {
            self.devices.len()
        }
    }

    pub fn copy_devices(&self, device: usize) -> Option<Devices> {
        let host = self.host?;
        Some(Devices {
            number: device,
            host,
            device: self.devices.get(device)?.handle,
        })
    }

    /// Loads every registered library's image on `device` (those not loaded yet) and
    /// binds its entries: kernels by name, global variables into the mapping table.
    pub fn load_images(&mut self, device: usize) -> Result<(), String> {
        let State {
            devices,
            libraries,
            host,
            requirements,
            ..
        } = self;
        let unified = *requirements & requirements::UNIFIED_SHARED_MEMORY != 0;
        let dev = devices
            .get_mut(device)
            .ok_or_else(|| format!("device {device} does not exist"))?;
        let host = host.ok_or_else(|| "liboffload has no host device".to_string())?;
        for lib in libraries.iter() {
            if dev.programs.contains_key(&lib.desc) {
                continue;
            }
            let Some(image) = lib
                .images
                .iter()
                .find(|i| ol::is_valid_binary(dev.handle, i).unwrap_or(false))
            else {
                continue;
            };
            let program = ol::create_program(dev.handle, image)?;
            dev.programs.insert(lib.desc, program);
            crate::ompt::events::device_load(
                device,
                image.as_ptr() as usize,
                image.len(),
                program.0 as u64,
            );
            // `indirect` functions: the device's address of each, which its global holds.
            let mut indirect = Vec::new();
            for entry in lib.entries.iter().filter(|e| e.is_indirect()) {
                let global = ol::global_address(program, &entry.name)?;
                let mut device_fn = [0u8; std::mem::size_of::<usize>()];
                let at = device_fn.as_mut_ptr() as usize;
                crate::report::info::transfer(device, false, at, global, device_fn.len(), 0);
                ol::memcpy(
                    device_fn.as_mut_ptr() as usize,
                    host,
                    global,
                    dev.handle,
                    device_fn.len(),
                )?;
                indirect.push((entry, usize::from_ne_bytes(device_fn)));
            }
            if let Some(gpu) = dev.gpu.as_mut() {
                let kernels: Vec<(usize, &str)> = lib
                    .entries
                    .iter()
                    .filter(|e| e.is_kernel())
                    .map(|e| (e.host_address, e.name.as_str()))
                    .collect();
                let pairs: Vec<(usize, usize)> = indirect
                    .iter()
                    .map(|&(e, device_fn)| (e.host_address, device_fn))
                    .collect();
                gpu.image_loaded(dev.handle, host, program, &kernels, &pairs)?;
            }
            // A host function pointer that reaches a region (a pointer to a zero-length
            // section of it) becomes the device's function, as in LLVM.
            for &(entry, device_fn) in &indirect {
                dev.table.insert(Mapping::permanent(
                    entry.host_address,
                    entry.size,
                    device_fn,
                    entry.name_address,
                ));
            }
            for entry in &lib.entries {
                if entry.is_kernel() {
                    let kernel = ol::kernel(program, &entry.name)?;
                    dev.kernels.insert(entry.host_address, kernel);
                } else if entry.is_global() {
                    // A `declare target` global: its device copy lives in the image and
                    // stays mapped for the program's lifetime (no count ends it).
                    let device_begin = ol::global_address(program, &entry.name)?;
                    // Under unified shared memory clang reaches globals through device
                    // pointers (`<name>_decl_tgt_ref_ptr`) that must hold what the host's
                    // do, the host variable's address: copied at load, as LLVM does.
                    // (LLVM logs no transfer for it.)
                    if unified {
                        ol::memcpy(
                            device_begin,
                            dev.handle,
                            entry.host_address,
                            host,
                            entry.size,
                        )?;
                    }
                    dev.table.insert(Mapping::permanent(
                        entry.host_address,
                        entry.size,
                        device_begin,
                        entry.name_address,
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Records the binary `desc` describes.
///
/// # Safety
/// `desc` must be clang's descriptor, valid until `unregister` is called with it.
pub unsafe fn register(desc: *const BinDesc) {
    if desc.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let d = unsafe { &*desc };
    // SAFETY: the host table is clang's entry array (either layout; see `entries`).
    let table = match unsafe { entries::read(d.host_entries_begin, d.host_entries_end) } {
        Ok(table) => table,
        Err(e) => {
            // Misread entries would bind the wrong symbols: the binary is not registered,
            // so its regions run on the host (or stop, when offloading is mandatory).
            policy::message(&format!("error: cannot register the binary: {e}"));
            return;
        }
    };
    // A descriptor without an image array has no images, whatever its count says.
    let count = if d.device_images.is_null() {
        0
    } else {
        usize::try_from(d.num_device_images).unwrap_or(0)
    };
    let images: Vec<&'static [u8]> = (0..count)
        .filter_map(|i| {
            // SAFETY: `device_images` holds `num_device_images` images whose bytes stay
            // mapped (they are the program's own data) while the binary is registered.
            unsafe {
                let image = &*d.device_images.add(i);
                let (start, end) = (image.image_start as *const u8, image.image_end as *const u8);
                if start.is_null() || end <= start {
                    return None;
                }
                Some(std::slice::from_raw_parts(
                    start,
                    end.offset_from(start) as usize,
                ))
            }
        })
        .collect();
    // Before the lock: libomp's side of the connection calls the OpenMP API.
    crate::ompt::connect::connect();
    let mut state = state();
    state.ensure_initialized();
    for value in &table.requires {
        crate::devices::requires::add(&mut state.requires_first, *value);
    }
    state.requirements |= table.requirements;
    state.add_devices_for(&images);
    state.libraries.push(Library {
        desc: desc as usize,
        images,
        entries: table.entries,
    });
}

/// Unloads the binary `desc`: its kernels are forgotten and its programs destroyed on
/// every device. When the last binary goes (clang calls this from an atexit handler,
/// once per binary), the data still mapped is freed and liboffload is shut down, as
/// LLVM's deinitialisation does.
pub fn unregister(desc: usize) {
    let mut state = state();
    if crate::report::info::enabled(crate::report::info::kind::DUMP_TABLE) {
        // LLVM names this moment as a construct of its own, last device first.
        #[repr(C)]
        struct Ident {
            reserved: [i32; 4],
            psource: *const std::ffi::c_char,
        }
        let at = Ident {
            reserved: [0; 4],
            psource: c";libomptarget;libomptarget;0;0;;".as_ptr(),
        };
        let loc = (&at as *const Ident).cast();
        for (number, device) in state.devices.iter().enumerate().rev() {
            crate::mapping::info_lines::dump_table(number, &device.table, loc);
        }
    }
    let regions: Vec<usize> = state
        .libraries
        .iter()
        .filter(|l| l.desc == desc)
        .flat_map(|l| l.entries.iter().map(|e| e.host_address))
        .collect();
    state.libraries.retain(|l| l.desc != desc);
    for (number, dev) in state.devices.iter_mut().enumerate() {
        for region in &regions {
            dev.kernels.remove(region);
        }
        if let Some(program) = dev.programs.remove(&desc) {
            crate::ompt::events::device_unload(number, program.0 as u64);
            if let Err(e) = ol::destroy_program(program) {
                policy::message(&format!("error: unloading an image: {e}"));
            }
        }
    }
    if !state.libraries.is_empty() || !state.initialized {
        return;
    }
    for dev in &mut state.devices {
        for mapping in dev.table.drain() {
            // What the constructs allocated is freed here. A mapping that owns no
            // allocation is not ours to free: a `declare target` global (the program's
            // memory, gone with it) or an `omp_target_associate_ptr` pair (the user's).
            if mapping.device_alloc != 0 {
                let _ = device_memory::free(mapping.device_alloc);
            }
        }
    }
    crate::report::profile::write();
    for number in 0..state.devices.len() {
        crate::ompt::events::device_finalize(number);
    }
    state.devices.clear();
    state.requirements = 0;
    state.requires_first = 0;
    state.all.clear();
    state.host = None;
    state.initialized = false;
    crate::plugin::queue_pool::drain();
    if let Err(e) = ol::shut_down() {
        policy::message(&format!("error: {e}"));
    }
}

/// libomp's default device (`omp_get_default_device`, found at run time so that this
/// library does not need libomp to link), 0 without libomp.
pub fn default_device() -> i64 {
    static FUNCTION: LazyLock<Option<extern "C" fn() -> i32>> = LazyLock::new(|| {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when present, is
        // libomp's `int omp_get_default_device(void)`.
        unsafe {
            let f = libc::dlsym(libc::RTLD_DEFAULT, c"omp_get_default_device".as_ptr());
            (!f.is_null())
                .then(|| std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> i32>(f))
        }
    });
    FUNCTION.map_or(0, |f| i64::from(f()))
}

/// What a device number names.
pub enum Target {
    /// The initial device (the host itself): nothing to offload.
    Host,
    Device(usize),
}

/// Ends the program as LLVM's `getDevice` failure does: device `id` does not exist.
pub fn out_of_range(id: i64) -> ! {
    let available = state().num_devices();
    let text = if policy::llvm_release() >= 22 {
        format!("\"invalid value\" device number '{id}' out of range, only {available} devices available")
    } else {
        format!("Device number '{id}' out of range, only {available} devices available")
    };
    policy::fatal(id as i32, &text)
}

/// The offload device `device_id` names, for the routines LLVM runs on its device
/// table alone (`__tgt_print_device_info`, `llvm_omp_target_lock_mem`): any other
/// number, the initial device's included, ends the program as there.
pub fn device_or_abort(device_id: i64) -> usize {
    match resolve(device_id) {
        Some(Target::Device(device)) if device_id >= 0 => device,
        _ => out_of_range(device_id),
    }
}

/// Resolves `device_id` for an OpenMP routine (`omp_target_alloc`, `omp_get_mapped_ptr`,
/// ...). LLVM 22 loads the registered images onto a device whenever a routine names it,
/// so `declare target` globals are mapped before any construct ran; LLVM 19 waited for
/// the first construct. A failed load is left to the construct that needs the image.
pub fn resolve(device_id: i64) -> Option<Target> {
    let target = resolve_number(device_id)?;
    if let Target::Device(device) = target {
        if policy::llvm_release() >= 22 {
            let _ = state().load_images(device);
        }
    }
    Some(target)
}

/// Resolves `device_id` as LLVM does: -1 is the default device; the initial device
/// (number `num_devices`) is the host. `None`: no such device.
pub fn resolve_number(device_id: i64) -> Option<Target> {
    let id = if device_id == -1 {
        default_device()
    } else {
        device_id
    };
    let num = state().num_devices() as i64;
    if policy::requested() == Policy::Disabled || id == num {
        return Some(Target::Host);
    }
    (0..num)
        .contains(&id)
        .then_some(Target::Device(id as usize))
}
