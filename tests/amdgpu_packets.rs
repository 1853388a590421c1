//! AQL packet encoding: the Rust packet structs and header constants agree with the HSA
//! runtime's own header (Debian's `libhsa-runtime-dev`, compiled by `cc`), and the
//! encoders put every launch value where the packet processor reads it.

use std::mem::{offset_of, size_of};
use std::process::Command;

use offload::plugin::foundation::error::{ErrorCode, Result};
use offload::plugins::amdgpu::packet::*;

/// (C expression, Rust value) pairs.
fn expectations() -> Vec<(&'static str, u64)> {
    type D = KernelDispatchPacket;
    type B = BarrierAndPacket;
    let mut v: Vec<(&'static str, usize)> = vec![
        ("sizeof(hsa_kernel_dispatch_packet_t)", size_of::<D>()),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, header)",
            offset_of!(D, header),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, setup)",
            offset_of!(D, setup),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, workgroup_size_x)",
            offset_of!(D, workgroup_size),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, workgroup_size_y)",
            offset_of!(D, workgroup_size) + 2,
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, workgroup_size_z)",
            offset_of!(D, workgroup_size) + 4,
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, reserved0)",
            offset_of!(D, reserved0),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, grid_size_x)",
            offset_of!(D, grid_size),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, grid_size_y)",
            offset_of!(D, grid_size) + 4,
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, grid_size_z)",
            offset_of!(D, grid_size) + 8,
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, private_segment_size)",
            offset_of!(D, private_segment_size),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, group_segment_size)",
            offset_of!(D, group_segment_size),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernel_object)",
            offset_of!(D, kernel_object),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, kernarg_address)",
            offset_of!(D, kernarg_address),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, reserved2)",
            offset_of!(D, reserved2),
        ),
        (
            "offsetof(hsa_kernel_dispatch_packet_t, completion_signal)",
            offset_of!(D, completion_signal),
        ),
        ("sizeof(hsa_barrier_and_packet_t)", size_of::<B>()),
        (
            "offsetof(hsa_barrier_and_packet_t, header)",
            offset_of!(B, header),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved0)",
            offset_of!(B, reserved0),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved1)",
            offset_of!(B, reserved1),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, dep_signal)",
            offset_of!(B, dep_signal),
        ),
        (
            "sizeof(((hsa_barrier_and_packet_t *)0)->dep_signal)",
            size_of::<[u64; 5]>(),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, reserved2)",
            offset_of!(B, reserved2),
        ),
        (
            "offsetof(hsa_barrier_and_packet_t, completion_signal)",
            offset_of!(B, completion_signal),
        ),
        ("sizeof(hsa_signal_t)", size_of::<u64>()),
    ];
    let consts: Vec<(&'static str, u16)> = vec![
        ("HSA_PACKET_HEADER_TYPE", HSA_PACKET_HEADER_TYPE),
        ("HSA_PACKET_HEADER_BARRIER", HSA_PACKET_HEADER_BARRIER),
        (
            "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
            HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
        ),
        (
            "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
            HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
        ),
        (
            "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
            HSA_PACKET_TYPE_VENDOR_SPECIFIC,
        ),
        ("HSA_PACKET_TYPE_INVALID", HSA_PACKET_TYPE_INVALID),
        (
            "HSA_PACKET_TYPE_KERNEL_DISPATCH",
            HSA_PACKET_TYPE_KERNEL_DISPATCH,
        ),
        ("HSA_PACKET_TYPE_BARRIER_AND", HSA_PACKET_TYPE_BARRIER_AND),
        (
            "HSA_PACKET_TYPE_AGENT_DISPATCH",
            HSA_PACKET_TYPE_AGENT_DISPATCH,
        ),
        ("HSA_PACKET_TYPE_BARRIER_OR", HSA_PACKET_TYPE_BARRIER_OR),
        ("HSA_FENCE_SCOPE_NONE", HSA_FENCE_SCOPE_NONE),
        ("HSA_FENCE_SCOPE_AGENT", HSA_FENCE_SCOPE_AGENT),
        ("HSA_FENCE_SCOPE_SYSTEM", HSA_FENCE_SCOPE_SYSTEM),
        (
            "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
            HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        ),
    ];
    let mut out: Vec<(&'static str, u64)> = v.drain(..).map(|(e, n)| (e, n as u64)).collect();
    out.extend(consts.into_iter().map(|(e, n)| (e, u64::from(n))));
    out
}

/// Fails (never skips) when the header is missing: the test command installs it.
#[test]
fn packets_and_constants_match_the_hsa_header() {
    let header = "/usr/include/hsa/hsa.h";
    assert!(
        std::path::Path::new(header).exists(),
        "{header} is missing: install Debian's libhsa-runtime-dev (apt-get install -y libhsa-runtime-dev)"
    );
    let dir = std::env::temp_dir().join(format!("offload-aql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let checks = expectations();
    let mut source = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <hsa/hsa.h>\nint main(void) {\n",
    );
    for (expr, _) in &checks {
        source.push_str(&format!(
            "  printf(\"%llu\\n\", (unsigned long long)({expr}));\n"
        ));
    }
    source.push_str("  return 0;\n}\n");
    let c_file = dir.join("aql.c");
    let exe = dir.join("aql");
    std::fs::write(&c_file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (set CC)");
    assert!(status.success(), "the AQL probe compiles against {header}");
    let out = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let values: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), checks.len());
    for ((expr, rust), c) in checks.iter().zip(values) {
        assert_eq!(*rust, c, "{expr}: Rust says {rust}, hsa.h says {c}");
    }
}

/// A launch as the tests describe it: its extents, unchecked, and the rest of the packet.
#[derive(Clone, Copy)]
struct DispatchParams {
    dimensions: u32,
    num_groups: [u32; 3],
    group_size: [u32; 3],
    target: DispatchTarget,
}

/// The packet the launch path makes: the shape checked, then the packet.
fn dispatch_packet(q: &DispatchParams) -> Result<KernelDispatchPacket> {
    let shape = launch_shape(q.dimensions, q.num_groups, q.group_size)?;
    Ok(shaped_dispatch_packet(&shape, &q.target))
}

fn params() -> DispatchParams {
    DispatchParams {
        dimensions: 3,
        num_groups: [7, 5, 3],
        group_size: [64, 2, 4],
        target: DispatchTarget {
            private_segment_size: 1024,
            group_segment_size: 4096 + 512,
            kernel_object: 0x7f00_1234_5000,
            kernarg_address: 0x7f00_aaaa_0000,
            completion_signal: 0x5151,
        },
    }
}

#[test]
fn dispatch_packet_carries_the_launch() {
    let p = dispatch_packet(&params()).unwrap();
    // Header: type 2 (kernel dispatch), barrier bit, acquire and release at system scope.
    assert_eq!(p.header, 2 | 1 << 8 | 2 << 9 | 2 << 11);
    assert_eq!(p.header, DISPATCH_HEADER);
    assert_eq!(p.setup, 3);
    assert_eq!(p.workgroup_size, [64, 2, 4]);
    assert_eq!(p.grid_size, [7 * 64, 5 * 2, 3 * 4]);
    assert_eq!((p.private_segment_size, p.group_segment_size), (1024, 4608));
    assert_eq!(p.kernel_object, 0x7f00_1234_5000);
    assert_eq!(p.kernarg_address, 0x7f00_aaaa_0000);
    assert_eq!(p.completion_signal, 0x5151);
    assert_eq!((p.reserved0, p.reserved2), (0, 0));
    assert_eq!(
        header_word(p.header, p.setup),
        0x0003_0000 | u32::from(p.header)
    );
}

#[test]
fn setup_holds_the_dimension_count_and_unused_dimensions_are_one() {
    for dims in 1..=3u32 {
        let mut q = params();
        q.dimensions = dims;
        for d in dims as usize..3 {
            q.num_groups[d] = if d % 2 == 0 { 0 } else { 1 };
            q.group_size[d] = 0;
        }
        let p = dispatch_packet(&q).unwrap();
        assert_eq!(p.setup, dims as u16);
        for d in 0..3 {
            if d < dims as usize {
                assert_eq!(
                    p.grid_size[d],
                    params().num_groups[d] * params().group_size[d]
                );
            } else {
                assert_eq!((p.workgroup_size[d], p.grid_size[d]), (1, 1), "dim {d}");
            }
        }
    }
}

fn dispatch_error(edit: impl FnOnce(&mut DispatchParams)) -> String {
    let mut q = params();
    edit(&mut q);
    let e = dispatch_packet(&q).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.details);
    e.details.clone()
}

#[test]
fn bad_launch_shapes_are_refused_with_the_numbers() {
    for dims in [0, 4, u32::MAX] {
        let d = dispatch_error(|q| q.dimensions = dims);
        assert!(d.contains(&format!("not {dims}")), "{d}");
    }
    let d = dispatch_error(|q| q.group_size[1] = 65536);
    assert!(d.contains("in y is 65536") && d.contains("65535"), "{d}");
    let d = dispatch_error(|q| q.group_size[0] = 0);
    assert!(d.contains("in x is 0"), "{d}");
    let d = dispatch_error(|q| q.num_groups[2] = 0);
    assert!(d.contains("0 groups in z"), "{d}");
    // 2^26 groups of 64 = 2^32 work-items: one more than a u32 holds.
    let d = dispatch_error(|q| q.num_groups[0] = 1 << 26);
    assert!(
        d.contains("in x") && d.contains("67108864 groups × 64") && d.contains("4294967296"),
        "{d}"
    );
    let d = dispatch_error(|q| {
        q.dimensions = 1;
        q.num_groups[1] = 5;
    });
    assert!(d.contains("5 group(s)") && d.contains("in y"), "{d}");
    // Just inside the limit is fine.
    let mut q = params();
    q.num_groups[0] = (1 << 26) - 1;
    assert_eq!(dispatch_packet(&q).unwrap().grid_size[0], u32::MAX - 63);
}

#[test]
fn barrier_and_packet_waits_for_up_to_five_signals() {
    let p = barrier_and_packet(&[11, 22, 33], 99).unwrap();
    assert_eq!(p.header, 3 | 1 << 8 | 2 << 9 | 2 << 11);
    assert_eq!(p.dep_signal, [11, 22, 33, 0, 0]);
    assert_eq!(p.completion_signal, 99);
    assert_eq!((p.reserved0, p.reserved1, p.reserved2), (0, 0, 0));
    let p = barrier_and_packet(&[], 0).unwrap();
    assert_eq!((p.dep_signal, p.completion_signal), ([0; 5], 0));
    let p = barrier_and_packet(&[1, 2, 3, 4, 5], 6).unwrap();
    assert_eq!(p.dep_signal, [1, 2, 3, 4, 5]);
    let e = barrier_and_packet(&[1, 2, 3, 4, 5, 6], 7).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(
        e.details.contains("at most 5") && e.details.contains("6 were given"),
        "{}",
        e.details
    );
}
