//! Every struct of the C header has the layout the Rust definitions have: a C compiler
//! reports sizeof/offsetof of each, and the values must equal Rust's.

use offload::capi::*;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// (C expression, Rust value) pairs.
fn expectations() -> Vec<(&'static str, usize)> {
    vec![
        ("sizeof(ol_error_struct_t)", size_of::<ol_error_struct_t>()),
        (
            "offsetof(ol_error_struct_t, Details)",
            offset_of!(ol_error_struct_t, Details),
        ),
        (
            "sizeof(ol_code_location_t)",
            size_of::<ol_code_location_t>(),
        ),
        (
            "offsetof(ol_code_location_t, SourceFile)",
            offset_of!(ol_code_location_t, SourceFile),
        ),
        (
            "offsetof(ol_code_location_t, LineNumber)",
            offset_of!(ol_code_location_t, LineNumber),
        ),
        (
            "offsetof(ol_code_location_t, ColumnNumber)",
            offset_of!(ol_code_location_t, ColumnNumber),
        ),
        ("sizeof(ol_dimensions_t)", size_of::<ol_dimensions_t>()),
        (
            "offsetof(ol_dimensions_t, z)",
            offset_of!(ol_dimensions_t, z),
        ),
        ("sizeof(ol_init_args_t)", size_of::<ol_init_args_t>()),
        (
            "offsetof(ol_init_args_t, NumPlatforms)",
            offset_of!(ol_init_args_t, NumPlatforms),
        ),
        (
            "offsetof(ol_init_args_t, Platforms)",
            offset_of!(ol_init_args_t, Platforms),
        ),
        (
            "sizeof(ol_kernel_launch_size_args_t)",
            size_of::<ol_kernel_launch_size_args_t>(),
        ),
        (
            "offsetof(ol_kernel_launch_size_args_t, NumGroups)",
            offset_of!(ol_kernel_launch_size_args_t, NumGroups),
        ),
        (
            "offsetof(ol_kernel_launch_size_args_t, GroupSize)",
            offset_of!(ol_kernel_launch_size_args_t, GroupSize),
        ),
        (
            "offsetof(ol_kernel_launch_size_args_t, DynSharedMemory)",
            offset_of!(ol_kernel_launch_size_args_t, DynSharedMemory),
        ),
        (
            "sizeof(ol_kernel_launch_prop_t)",
            size_of::<ol_kernel_launch_prop_t>(),
        ),
        (
            "offsetof(ol_kernel_launch_prop_t, data)",
            offset_of!(ol_kernel_launch_prop_t, data),
        ),
        ("sizeof(ol_errc_t)", size_of::<ol_errc_t>()),
        ("sizeof(ol_device_info_t)", size_of::<ol_device_info_t>()),
        (
            "sizeof(ol_platform_backend_t)",
            size_of::<ol_platform_backend_t>(),
        ),
        ("sizeof(ol_result_t)", size_of::<ol_result_t>()),
        (
            "sizeof(ol_device_handle_t)",
            size_of::<ol_device_handle_t>(),
        ),
    ]
}

#[test]
fn c_and_rust_agree_on_every_struct_layout() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = std::env::temp_dir().join(format!("offload-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let checks = expectations();
    let mut source = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <offload/liboffload.h>\nint main(void) {\n");
    for (expr, _) in &checks {
        source.push_str(&format!("  printf(\"%zu\\n\", (size_t)({expr}));\n"));
    }
    source.push_str("  return 0;\n}\n");
    let c_file = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&c_file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(format!("{root}/include"))
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (set CC)");
    assert!(status.success(), "the layout probe compiles");
    let out = Command::new(&exe).output().unwrap();
    let values: Vec<usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(values.len(), checks.len());
    for ((expr, rust), c) in checks.iter().zip(values) {
        assert_eq!(*rust, c, "{expr}: Rust says {rust}, C says {c}");
    }
}
