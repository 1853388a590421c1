//! LLVM 22's kernel-language API: what clang's `-foffload-via-llvm` makes of CUDA/HIP
//! source. A `kernel<<<grid, block, shared, stream>>>(args...)` becomes
//! `__llvmPushCallConfiguration` (the launch's configuration, kept per thread), then the
//! kernel's host stub, which takes it back with `__llvmPopCallConfiguration` and calls
//! `llvmLaunchKernel` with the stub's address (the region ID of the kernel's offload
//! entry) and the arguments packed as the kernel takes them.
//!
//! Launches go to device 0, synchronously, as LLVM's do, with the packed arguments as
//! they are and the launch property that says they are the kernel's C parameters
//! (`OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS`). A GPU takes them as its parameter buffer.
//! On the host device the kernel is a plain function of the same parameters, which
//! liboffload's host device then calls with the platform's C calling convention, from
//! the parameter types the image records (the kernel's mangled name, and its debug
//! information for classes by value and `extern "C"` kernels); a kernel whose types it
//! cannot know is refused there, and the refusal is this launch's result. (LLVM's own
//! host plugin crashes on these launches: the argument pointer array clang 22 passes is
//! NULL.)

use crate::devices::registry::{self, Target};
use crate::plugin::ol;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::cell::Cell;
use std::ffi::c_void;

/// CUDA's `dim3` as clang's wrapper header declares it (components it leaves out are 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    /// The extents a launch takes: a component left 0 (`dim3(n)` sets only x) is 1; an x
    /// of 0 is no launch at all.
    fn extents(self, what: &str) -> Result<[u32; 3], String> {
        if self.x == 0 {
            return Err(format!(
                "a {what} of {{{}, {}, {}}}: x must be at least 1",
                self.x, self.y, self.z
            ));
        }
        Ok([self.x, self.y.max(1), self.z.max(1)])
    }
}

/// What clang's stub passes as the kernel's arguments (LLVM's `KernelLaunchParamsTy`):
/// the packed arguments' size and address (and an array of pointers to each, NULL from
/// clang 22).
#[repr(C)]
struct LaunchParams {
    size: u64,
    data: *const u8,
    pointers: *const *const c_void,
}

#[derive(Clone, Copy, Default)]
struct CallConfiguration {
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: usize,
}

thread_local! {
    static CONFIGURATION: Cell<CallConfiguration> = Cell::new(CallConfiguration::default());
}

/// Keeps the configuration of the next launch on this thread. 0: kept.
#[no_mangle]
pub extern "C" fn __llvmPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: *mut c_void,
) -> u32 {
    boundary("__llvmPushCallConfiguration", || {
        CONFIGURATION.with(|c| {
            c.set(CallConfiguration {
                grid,
                block,
                shared,
                stream: stream as usize,
            })
        });
        0
    })
}

/// Gives the kept configuration back. 0: given; 1: a NULL destination (nothing written).
///
/// # Safety
/// Each pointer is NULL or valid for one write of its type.
#[no_mangle]
pub unsafe extern "C" fn __llvmPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> u32 {
    boundary("__llvmPopCallConfiguration", || {
        if grid.is_null() || block.is_null() || shared.is_null() || stream.is_null() {
            message("error: __llvmPopCallConfiguration: a NULL destination");
            return 1;
        }
        let c = CONFIGURATION.with(Cell::get);
        // SAFETY: non-NULL, valid for a write (the caller's promise).
        unsafe {
            *grid = c.grid;
            *block = c.block;
            *shared = c.shared;
            *stream = c.stream as *mut c_void;
        }
        0
    })
}

/// Runs the kernel whose host stub is `func` on device 0, synchronously. 0 once it ran;
/// 1 (with the reason on stderr) when it could not: no device, an unknown kernel, a
/// configuration of no threads, or a launch the device refused.
///
/// # Safety
/// `args` is NULL or clang's launch parameters, whose data holds `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn llvmLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut c_void,
    shared: usize,
    _stream: *mut c_void,
) -> u32 {
    boundary("llvmLaunchKernel", || {
        // SAFETY: the caller's promise, passed on.
        match unsafe { launch(func as usize, grid, block, args.cast(), shared) } {
            Ok(()) => 0,
            Err(e) => {
                message(&format!("error: llvmLaunchKernel: {e}"));
                1
            }
        }
    })
}

/// # Safety
/// As `llvmLaunchKernel`.
unsafe fn launch(
    func: usize,
    grid: Dim3,
    block: Dim3,
    params: *const LaunchParams,
    shared: usize,
) -> Result<(), String> {
    let blocks = grid.extents("grid")?;
    let threads = block.extents("block")?;
    let packed: &[u8] = if params.is_null() {
        &[]
    } else {
        // SAFETY: clang's launch parameters (the caller's promise).
        let p = unsafe { &*params };
        let size = usize::try_from(p.size).map_err(|_| format!("{} bytes of arguments", p.size))?;
        match (size, p.data.is_null()) {
            (0, _) => &[],
            (_, true) => return Err(format!("{size} bytes of arguments at NULL")),
            // SAFETY: `size` bytes at `data` (the caller's promise).
            (size, false) => unsafe { std::slice::from_raw_parts(p.data, size) },
        }
    };
    let Some(Target::Device(device)) = registry::resolve(0) else {
        return Err("no offload device: no image of this program fits any device".into());
    };
    let (handle, kernel) = {
        let mut state = registry::state();
        state.load_images(device)?;
        let dev = &state.devices[device];
        let kernel = dev.kernels.get(&func).copied().ok_or_else(|| {
            format!("no kernel of device {device} has the host stub at {func:#x}")
        })?;
        (dev.handle, kernel)
    };
    ol::launch_c_parameters(handle, kernel, packed, blocks, threads, shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim3_components_left_out_are_one_and_x_zero_is_refused() {
        assert_eq!(Dim3 { x: 4, y: 0, z: 0 }.extents("grid"), Ok([4, 1, 1]));
        assert_eq!(Dim3 { x: 2, y: 3, z: 5 }.extents("grid"), Ok([2, 3, 5]));
        assert!(Dim3::default()
            .extents("block")
            .unwrap_err()
            .contains("x must be"));
    }

    #[test]
    fn the_configuration_is_kept_per_thread() {
        let grid = Dim3 { x: 8, y: 1, z: 0 };
        let block = Dim3 { x: 32, y: 0, z: 0 };
        assert_eq!(
            __llvmPushCallConfiguration(grid, block, 64, std::ptr::null_mut()),
            0
        );
        let (mut g, mut b, mut s, mut q) =
            (Dim3::default(), Dim3::default(), 0usize, 1 as *mut c_void);
        // SAFETY: valid destinations.
        assert_eq!(
            unsafe { __llvmPopCallConfiguration(&mut g, &mut b, &mut s, &mut q) },
            0
        );
        assert_eq!((g, b, s, q), (grid, block, 64, std::ptr::null_mut()));
        std::thread::spawn(|| {
            let (mut g, mut b, mut s, mut q) = (
                Dim3 { x: 9, y: 9, z: 9 },
                Dim3::default(),
                1usize,
                std::ptr::null_mut(),
            );
            // SAFETY: valid destinations.
            unsafe { __llvmPopCallConfiguration(&mut g, &mut b, &mut s, &mut q) };
            assert_eq!((g, s), (Dim3::default(), 0), "another thread's is its own");
        })
        .join()
        .unwrap();
        // SAFETY: NULL destinations are refused, not written.
        assert_eq!(
            unsafe { __llvmPopCallConfiguration(std::ptr::null_mut(), &mut b, &mut s, &mut q,) },
            1
        );
    }
}
