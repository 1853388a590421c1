//! Host device refusals: images it cannot load, symbols of the wrong kind, launches it
//! cannot run, wrong markers; and the kernel header's own checks.

mod host_support;

use host_support::*;
use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::foundation::worker_pool::WorkerPool;
use offload::plugin::{KernelArgs, LaunchConfig};
use std::process::Command;

fn refusal(image: &[u8]) -> String {
    let device = device();
    let e = device.check_image(image).unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidBinary, "{e}");
    let e2 = match device.load_program(image) {
        Ok(_) => panic!("a refused image loaded"),
        Err(e2) => e2,
    };
    assert_eq!(e2, e, "load_program refuses as check_image does");
    e.details.clone()
}

#[test]
fn wrong_images_are_refused_with_reasons() {
    let good = host_abi();
    device().check_image(&good).unwrap();

    let short = refusal(&good[..12]);
    assert!(
        short.contains("12 bytes") && short.contains("truncated"),
        "{short}"
    );

    let object = build_with(
        compiler(),
        &["-c", "-fPIC", "-I", "include", "c-tests/kernels/host_abi.c"],
    )
    .unwrap();
    let rel = refusal(&object);
    assert!(
        rel.contains("relocatable object") && rel.contains("-shared"),
        "{rel}"
    );

    match build_with(
        "clang-19",
        &[
            "-c",
            "-emit-llvm",
            "-I",
            "include",
            "c-tests/kernels/llvm_convention.c",
        ],
    ) {
        Some(bitcode) => {
            let bc = refusal(&bitcode);
            assert!(
                bc.contains("LLVM bitcode") && bc.contains("JIT-free"),
                "{bc}"
            );
        }
        None => eprintln!("clang-19 missing: bitcode image not tested"),
    }

    let foreign_target = if cfg!(target_arch = "aarch64") {
        ("x86_64-linux-gnu", "x86_64")
    } else {
        ("aarch64-linux-gnu", "aarch64")
    };
    let target = format!("--target={}", foreign_target.0);
    let foreign = build_with(
        "clang-19",
        &[
            &target,
            "-nostdlib",
            "-shared",
            "-fPIC",
            "-fuse-ld=lld",
            "c-tests/kernels/llvm_convention.c",
        ],
    )
    .unwrap_or_else(|| {
        // No cross toolchain: the same header with the machine field changed.
        let mut bytes = good[..64].to_vec();
        let machine: u16 = if cfg!(target_arch = "aarch64") {
            62
        } else {
            183
        };
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes
    });
    let arm = refusal(&foreign);
    assert!(
        arm.contains(&format!("{} shared object", foreign_target.1)),
        "{arm}"
    );
    assert!(arm.contains(std::env::consts::ARCH), "{arm}");
    assert!(refusal(b"").contains("empty"));
}

#[test]
fn symbols_of_the_wrong_kind_or_missing() {
    let program = load(&host_abi());
    let e = program.kernel("counter").err().unwrap();
    assert_eq!(code(&e), ErrorCode::SymbolKind, "{e}");
    let e = program.global("saxpy").unwrap_err();
    assert_eq!(code(&e), ErrorCode::SymbolKind, "{e}");
    let e = program.kernel("saxpi").err().unwrap();
    assert_eq!(code(&e), ErrorCode::NotFound, "{e}");
    assert!(
        e.details.contains("'saxpi'") && e.details.contains("saxpy"),
        "{e}"
    );
    let e = program.global("nothing_here").unwrap_err();
    assert_eq!(code(&e), ErrorCode::NotFound, "{e}");
    // The ABI markers are not symbols of the program.
    assert_eq!(program.symbol_kind("__ol_host_kernel_v1_saxpy"), None);
    assert!(program.global("__ol_host_kernel_v1_saxpy").is_err());
    assert!(!e.details.contains("__ol_host_kernel"), "{e}");
    assert_eq!(program.symbol_kind("_init"), None);
}

#[test]
fn launches_that_cannot_run_are_refused() {
    let dev = device();
    let program = load(&host_abi());
    let saxpy = program.kernel("saxpy").unwrap();

    let e = saxpy
        .launch(&grid1(1, 1), &args(&[bytes_of(&1.0f32)]))
        .unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument, "{e}");
    assert!(
        e.details.contains("takes a 32-byte argument buffer") && e.details.contains("is 4"),
        "{e}"
    );

    let local = match dev.info(offload::plugin::DeviceInfo::WorkGroupLocalMemSize) {
        Ok(offload::plugin::InfoValue::U64(n)) => n as usize,
        other => panic!("local memory size: {other:?}"),
    };
    let empty = program.kernel("empty").unwrap();
    let too_big = LaunchConfig {
        dyn_shared_memory: local + 1,
        ..grid1(2, 1)
    };
    let e = empty.launch(&too_big, &KernelArgs::default()).unwrap_err();
    assert_eq!(code(&e), ErrorCode::OutOfResources, "{e}");
    assert!(
        e.details.contains(&format!("{}", local + 1)) && e.details.contains(&local.to_string()),
        "{e}"
    );
    let just_fits = LaunchConfig {
        dyn_shared_memory: local,
        ..grid1(2, 1)
    };
    empty.launch(&just_fits, &KernelArgs::default()).unwrap();

    let threads = WorkerPool::global().threads() as u32;
    let resident = program.kernel("all_resident").unwrap();
    assert_eq!(
        resident.max_cooperative_groups(&grid1(1, 1)).unwrap(),
        threads
    );
    let coop = |groups: u32| LaunchConfig {
        cooperative: true,
        ..grid1(groups, 1)
    };
    let mut seen = vec![0i32; 1 + threads as usize + 1];
    let a = args(&[bytes_of(&(seen.as_mut_ptr() as usize))]);
    let e = resident.launch(&coop(threads + 1), &a).unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument, "{e}");
    assert!(e.details.contains(&format!("{}", threads + 1)), "{e}");
    assert_eq!(seen[0], 0, "nothing ran");
    resident.launch(&coop(threads), &a).unwrap();
    assert_eq!(seen[0], threads as i32);
    assert!(seen[1..=threads as usize].iter().all(|&s| s == 1));

    assert_eq!(saxpy.optimal_group_size(0).unwrap(), 256);
    assert_eq!(saxpy.optimal_group_size(local / 16).unwrap(), 16);
    let e = saxpy.optimal_group_size(local + 1).unwrap_err();
    assert_eq!(code(&e), ErrorCode::OutOfResources);

    let e = empty
        .launch(&grid1(0, 1), &KernelArgs::default())
        .unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument);
}

#[test]
fn markers_are_checked() {
    let program = load(&shared_object("markers.c", &[]));
    program
        .kernel("fine")
        .unwrap()
        .launch(&grid1(3, 1), &KernelArgs::default())
        .unwrap();
    for (kernel, version) in [("future", 3), ("old", 1)] {
        let e = program.kernel(kernel).err().unwrap();
        assert_eq!(code(&e), ErrorCode::InvalidBinary, "{e}");
        assert!(
            e.details.contains(&format!("ABI version {version}"))
                && e.details.contains("implements version 2"),
            "{e}"
        );
    }

    for (define, words) in [
        ("-DBAD_MAGIC", "not a host kernel ABI v2 marker"),
        ("-DORPHAN", "no function 'hidden_kernel'"),
    ] {
        let e = device()
            .load_program(&shared_object("markers.c", &[define]))
            .err()
            .unwrap();
        assert_eq!(code(&e), ErrorCode::InvalidBinary, "{e}");
        assert!(e.details.contains(words), "{define}: {e}");
    }
}

#[test]
fn the_loader_says_why_it_refuses() {
    let bytes = shared_object("unresolved.c", &[]);
    device().check_image(&bytes).unwrap();
    let e = device().load_program(&bytes).err().unwrap();
    assert_eq!(code(&e), ErrorCode::InvalidBinary, "{e}");
    assert!(
        e.details.contains("liboffload_test_missing_function"),
        "{e}"
    );
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn loading_and_unloading_leaks_no_descriptors() {
    let bytes = host_abi();
    let dev = device();
    drop(dev.load_program(&bytes).unwrap());
    let before = open_descriptors();
    for _ in 0..100 {
        let p = dev.load_program(&bytes).unwrap();
        p.kernel("empty")
            .unwrap()
            .launch(&grid1(1, 1), &KernelArgs::default())
            .unwrap();
    }
    let after = open_descriptors();
    // Other tests open and close descriptors meanwhile; 100 leaked ones would show.
    assert!(
        after < before + 20,
        "{before} descriptors before, {after} after"
    );
}

#[test]
fn the_header_is_clean_c_and_cxx_and_matches_the_library() {
    let cxx = if compiler() == "clang-19" {
        "clang++-19"
    } else {
        "c++"
    };
    for (tool, std, lang) in [
        (compiler(), "-std=c99", "c"),
        (compiler(), "-std=c11", "c"),
        (cxx, "-std=c++17", "c++"),
    ] {
        let ok = Command::new(tool)
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
                "-fsyntax-only",
            ])
            .args(["-x", lang, "include/offload/host_kernel.h"])
            .current_dir(root())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{tool} {std} rejects include/offload/host_kernel.h");
    }

    use offload::plugins::host::kernel_abi::{
        HostKernelContext as Ctx, HostKernelMarker, ABI_VERSION, MAGIC,
    };
    use std::mem::{offset_of, size_of};
    let program = load(&shared_object("layout.c", &[]));
    let mut c = [0usize; 10];
    program
        .kernel("layout")
        .unwrap()
        .launch(&grid1(1, 1), &args(&[bytes_of(&(c.as_mut_ptr() as usize))]))
        .unwrap();
    let rust = [
        size_of::<Ctx>(),
        offset_of!(Ctx, dimensions),
        offset_of!(Ctx, group_id),
        offset_of!(Ctx, num_groups),
        offset_of!(Ctx, group_size),
        offset_of!(Ctx, dyn_shared),
        offset_of!(Ctx, dyn_shared_size),
        size_of::<HostKernelMarker>(),
        MAGIC as usize,
        ABI_VERSION as usize,
    ];
    assert_eq!(c, rust, "header (left) and library (right) disagree");
}
