//! A GPU image's global constructors and destructors (C++ globals in device code), run
//! as LLVM's CUDA plugin runs them, against the stand-in driver: the runtime builds the
//! array of `__init_array_object_*` addresses in priority order, points the bounds at
//! it, and launches `nvptx$device$init` once at load and `nvptx$device$fini` at unload.

mod cuda_support;

use cuda_support::{build_mock_driver, Mock};
use offload::plugin::{Backend, Device};
use offload::plugins::cuda::CudaPlugin;
use offload::plugins::global_ctors;

/// A PTX module naming the stand-in's constructor objects (priorities 200 and 101) and
/// one destructor object; the stand-in knows the init and fini kernels of this module.
const PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .global .align 8 .u64 __init_array_object_b_5eed_200 = b;\n\
    .visible .global .align 8 .u64 __init_array_object_a_5eed_101 = a;\n\
    .visible .global .align 8 .u64 __fini_array_object_d_5eed_65535 = d;\n\
    .visible .entry nvptx$device$init()\n{\n\tret;\n}\n\
    .visible .entry nvptx$device$fini()\n{\n\tret;\n}\n";

/// Plain kernels only: nothing to construct.
const PLAIN_PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n";

fn calls(mock: &Mock) -> Vec<i64> {
    (0..mock.get("ctor_calls"))
        .map(|i| mock.get(&format!("ctor_call_{i}")))
        .collect()
}

#[test]
fn constructors_run_in_priority_order_at_load_and_destructors_at_unload() {
    let Some(path) = build_mock_driver("ctors") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: the stand-in has no initialisers; the same loaded copy as the plugin's.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    let gpu = plugin.open_devices().unwrap().remove(0);
    let allocations = mock.get("live_allocs");

    let plain = gpu.load_program(PLAIN_PTX).unwrap();
    let none = global_ctors::construct(Backend::Cuda, &gpu, plain.as_ref(), PLAIN_PTX).unwrap();
    assert!(none.is_none(), "an image without the kernels owes nothing");
    assert_eq!(calls(&mock), Vec::<i64>::new());

    let program = gpu.load_program(PTX).unwrap();
    let owed = global_ctors::construct(Backend::Cuda, &gpu, program.as_ref(), PTX)
        .unwrap()
        .expect("the image has destructors");
    // Priority 101 before 200, whatever the image's order.
    assert_eq!(calls(&mock), vec![0xA101, 0xB200]);
    assert_eq!(mock.get("live_allocs"), allocations + 1, "the init array");

    owed.run(&gpu, program.as_ref()).unwrap();
    assert_eq!(calls(&mock), vec![0xA101, 0xB200, 0xD000]);
    assert_eq!(mock.get("live_allocs"), allocations, "both arrays freed");
}

#[test]
fn other_backends_owe_nothing() {
    let Some(path) = build_mock_driver("ctors-other") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    let gpu = plugin.open_devices().unwrap().remove(0);
    let program = gpu.load_program(PTX).unwrap();
    // The same image on a device the runtime reaches through MPI: the server runs them.
    let owed = global_ctors::construct(Backend::Mpi, &gpu, program.as_ref(), PTX).unwrap();
    assert!(owed.is_none());
}
