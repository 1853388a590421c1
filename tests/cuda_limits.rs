//! LLVM's variables for a CUDA context's limits, applied when the device is set up (as
//! LLVM's CUDA plugin does): `LIBOMPTARGET_HEAP_SIZE` (device-side malloc's heap) and
//! `LIBOMPTARGET_STACK_SIZE`. Against the stand-in driver, in a test binary of its own:
//! the variables are the process's.

mod cuda_support;

use cuda_support::{build_mock_driver, Mock};
use offload::plugins::cuda::CudaPlugin;

#[test]
fn heap_and_stack_sizes_reach_the_context() {
    let Some(path) = build_mock_driver("limits") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    // Set before any thread of this binary reads the environment.
    std::env::set_var("LIBOMPTARGET_HEAP_SIZE", "67108864");
    std::env::set_var("LIBOMPTARGET_STACK_SIZE", "4096");
    let plugin = CudaPlugin::with_library(&path);
    let devices = plugin.open_devices().unwrap();
    // SAFETY: the stand-in has no initialisers; the same loaded copy as the plugin's.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    assert_eq!(mock.get("heap_limit"), 64 << 20);
    assert_eq!(mock.get("stack_limit"), 4096);
    drop(devices);
}
