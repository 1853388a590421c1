//! The C tests' kernels as c-tests builds them for AMD GPUs (clang-19, ld.lld-19,
//! clang-offload-packager-19), read by the AMDGPU backend's image path without a GPU:
//! the OffloadBinary gives each GPU its own code object and refuses one it has none for,
//! and each kernel takes its argument struct as its one explicit argument at offset 0,
//! which is what lets the backend pass `olLaunchKernel`'s buffer as the kernarg segment.
//!
//! Without those tools the test says so and passes.

use offload::image::{
    parse_amdgpu_code_object, select_for, ArgValueKind, DeviceTarget, LoadableKind,
};
use offload::plugin::foundation::error::ErrorCode;
use offload::plugins::amdgpu::kernel::{args_fit, explicit_size};
use std::path::{Path, PathBuf};
use std::process::Command;

const TOOLS: [&str; 3] = ["clang-19", "ld.lld-19", "clang-offload-packager-19"];
const ARCHS: [&str; 2] = ["gfx90a", "gfx1030"];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// host_abi.c (VARIANT=1) for `ARCHS`, packed as c-tests packs it.
fn build(dir: &Path) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut pack = Command::new("clang-offload-packager-19");
    let packed = dir.join("host_abi.amdgpu");
    pack.arg("-o").arg(&packed);
    for arch in ARCHS {
        let object = dir.join(format!("{arch}.o"));
        let image = dir.join(format!("{arch}.hsaco"));
        run(Command::new("clang-19")
            .args([
                "--target=amdgcn-amd-amdhsa",
                &format!("-mcpu={arch}"),
                "-O2",
            ])
            .args([
                "-ffreestanding",
                "-nogpulib",
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror",
            ])
            .args(["-pedantic", "-DVARIANT=1", "-c"])
            .arg(format!("-I{root}/include"))
            .arg(format!("{root}/c-tests/kernels/host_abi.c"))
            .arg("-o")
            .arg(&object));
        run(Command::new("ld.lld-19")
            .arg("-shared")
            .arg(&object)
            .arg("-o")
            .arg(&image));
        pack.arg(format!(
            "--image=file={},triple=amdgcn-amd-amdhsa,arch={arch},kind=openmp",
            image.display()
        ));
    }
    run(&mut pack);
    packed
}

#[test]
fn each_gpu_gets_its_code_object_and_kernels_take_their_struct() {
    if let Some(missing) = TOOLS.iter().find(|t| !have(t)) {
        eprintln!("skipped: {missing} not found (the AMDGPU test kernels cannot be built)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("offload-amdgpu-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(build(&dir)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    for (processor, xnack, sramecc) in
        [("gfx90a", Some(false), Some(true)), ("gfx1030", None, None)]
    {
        let target = DeviceTarget::amdgpu(processor, xnack, sramecc);
        let chosen = select_for(&bytes, &target).unwrap_or_else(|e| panic!("{processor}: {e:?}"));
        assert_eq!(chosen.kind, LoadableKind::AmdgpuCodeObject);
        let object = parse_amdgpu_code_object(chosen.bytes(&bytes)).unwrap();
        assert_eq!(object.target.processor, processor);
        let names: Vec<&str> = object.kernels.iter().map(|k| k.name.as_str()).collect();
        for expected in [
            "saxpy",
            "reduce",
            "grid3d",
            "scalars",
            "bump",
            "empty",
            "all_resident",
        ] {
            assert!(
                names.contains(&expected),
                "{processor}: {expected} in {names:?}"
            );
        }
        assert!(
            !names.contains(&"raw_echo"),
            "host-only kernels are left out"
        );
        for k in &object.kernels {
            let explicit: Vec<_> = k.explicit_args().collect();
            if k.name == "empty" {
                assert!(explicit.is_empty(), "{}: {explicit:?}", k.name);
                continue;
            }
            assert_eq!(
                explicit.len(),
                1,
                "{}: the struct is the one argument",
                k.name
            );
            assert_eq!(explicit[0].offset, 0, "{}", k.name);
            // A struct of one pointer is passed as that pointer (clang's AMDGPU ABI):
            // the same bytes, described as a buffer.
            assert!(
                matches!(
                    explicit[0].value_kind,
                    ArgValueKind::ByValue | ArgValueKind::GlobalBuffer
                ),
                "{}: {:?}",
                k.name,
                explicit[0].value_kind
            );
            let size = explicit_size(k);
            assert_eq!(size as u64, explicit[0].size);
            assert!(
                args_fit(size, size) && !args_fit(size - 1, size),
                "{}",
                k.name
            );
            assert!(k.kernarg_segment_size >= explicit[0].size, "{}", k.name);
        }
    }

    let e = select_for(
        &bytes,
        &DeviceTarget::amdgpu("gfx1100", None, None).with_label("device 3"),
    )
    .expect_err("no code object for gfx1100");
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details.contains("gfx1100") && e.details.contains("device 3"),
        "{}",
        e.details
    );
}
