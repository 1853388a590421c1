//! Kernarg segments of real code objects (clang-19, several targets, code-object v4, v5
//! and v6; committed under tests/fixtures/kernarg/, rebuilt by
//! scripts/make-kernarg-fixtures.sh): every explicit argument lands where the metadata
//! says, with the caller's bytes; every hidden argument holds what the launch implies,
//! at the offset the metadata and the v5 implicit-argument ABI give; nothing else leaks.

mod image_support;

use image_support::{mutate, Rng};
use offload::image::{parse_amdgpu_code_object, AmdgpuCodeObject, AmdgpuKernel, ArgValueKind};
use offload::plugin::foundation::error::ErrorCode;
use offload::plugins::amdgpu::kernarg::{
    build_kernarg, explicit_size, kernarg_align, kernarg_size, KernargLaunch, MAX_KERNARG_SIZE,
};

/// (file, processor, code-object version).
const FIXTURES: &[(&str, &str, u32)] = &[
    ("gfx803_v5.co", "gfx803", 5),
    ("gfx900_v4.co", "gfx900", 4),
    ("gfx900_v5.co", "gfx900", 5),
    ("gfx90a_v4.co", "gfx90a", 4),
    ("gfx90a_xnackon_v5.co", "gfx90a", 5),
    ("gfx90a_v6.co", "gfx90a", 6),
    ("gfx1030_v5.co", "gfx1030", 5),
    ("gfx1100_v5.co", "gfx1100", 5),
    ("gfx1100_v6.co", "gfx1100", 6),
    ("gfx9-generic_v6.co", "gfx9-generic", 6),
    ("gfx10-3-generic_v6.co", "gfx10-3-generic", 6),
    ("gfx11-generic_v6.co", "gfx11-generic", 6),
    ("gfx12-generic_v6.co", "gfx12-generic", 6),
    ("dyn_lds_gfx90a_v5.co", "gfx90a", 5),
    ("dyn_lds_gfx11-generic_v6.co", "gfx11-generic", 6),
];

/// Each kernel's explicit arguments (offset, size) by the C layout rules of its source,
/// and the size of the C struct a caller would pass (tail padding included).
/// (kernel, [(offset, size)] of its explicit arguments, size of the caller's C struct).
type Layout = (&'static str, &'static [(u64, u64)], usize);

const LAYOUTS: &[Layout] = &[
    // char, int, double, short, pointer, long, float
    (
        "scalars",
        &[(0, 1), (4, 4), (8, 8), (16, 2), (24, 8), (32, 8), (40, 4)],
        48,
    ),
    // pointer, {char, int, double}, short
    ("with_struct", &[(0, 8), (8, 16), (24, 2)], 32),
    // pointer, int4 (16-byte aligned), char
    ("vector_arg", &[(0, 8), (16, 16), (32, 1)], 48),
    // pointer, __local pointer (32-bit LDS address)
    ("local_arg", &[(0, 8), (8, 4)], 16),
    ("no_args", &[], 0),
    ("hidden_all", &[(0, 8), (8, 4)], 16),
    ("sizes", &[(0, 8), (8, 1)], 16),
    ("dyn_lds", &[(0, 8), (8, 4)], 16),
];

fn load(name: &str) -> AmdgpuCodeObject {
    let path = format!(
        "{}/tests/fixtures/kernarg/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_amdgpu_code_object(&bytes).unwrap_or_else(|e| panic!("{name}: {}", e.details))
}

fn layout(kernel: &str) -> (&'static [(u64, u64)], usize) {
    let (_, args, c_size) = LAYOUTS
        .iter()
        .find(|(k, _, _)| *k == kernel)
        .unwrap_or_else(|| panic!("no expected layout for kernel {kernel}"));
    (args, *c_size)
}

/// A distinctive byte for byte `j` of explicit argument `i`.
fn pattern(i: usize, j: usize) -> u8 {
    (0x10 * (i + 1) + j) as u8
}

/// The caller's buffer: every argument filled with its pattern, padding 0xEE.
fn explicit_buffer(k: &AmdgpuKernel) -> Vec<u8> {
    let (args, c_size) = layout(&k.name);
    let mut b = vec![0xEE; c_size];
    for (i, (off, size)) in args.iter().enumerate() {
        for j in 0..*size as usize {
            b[*off as usize + j] = pattern(i, j);
        }
    }
    b
}

/// What the launch implies for a hidden kind (the part after `hidden_`).
fn expected_hidden(kind: &str, l: &KernargLaunch) -> u64 {
    let used = |d: usize, v: u32| {
        if d < l.dimensions as usize {
            u64::from(v)
        } else {
            1
        }
    };
    match kind {
        "block_count_x" => used(0, l.num_groups[0]),
        "block_count_y" => used(1, l.num_groups[1]),
        "block_count_z" => used(2, l.num_groups[2]),
        "group_size_x" => used(0, l.group_size[0]),
        "group_size_y" => used(1, l.group_size[1]),
        "group_size_z" => used(2, l.group_size[2]),
        "grid_dims" => u64::from(l.dimensions),
        "dynamic_lds_size" => u64::from(l.dynamic_shared),
        // Remainders (whole groups), global offsets, and every pointer: 0.
        _ => 0,
    }
}

fn read(seg: &[u8], off: usize, width: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(&seg[off..off + width]);
    u64::from_le_bytes(v)
}

const LAUNCH_3D: KernargLaunch = KernargLaunch {
    dimensions: 3,
    num_groups: [3, 5, 7],
    group_size: [16, 4, 2],
    dynamic_shared: 1536,
};

const LAUNCH_1D: KernargLaunch = KernargLaunch {
    dimensions: 1,
    num_groups: [9, 0, 0],
    group_size: [64, 0, 0],
    dynamic_shared: 0,
};

fn round_up(n: u64, a: u64) -> u64 {
    n.div_ceil(a) * a
}

/// Checks one kernel's segment for one launch; returns the hidden kinds it saw.
fn check_segment(file: &str, k: &AmdgpuKernel, launch: &KernargLaunch) -> Vec<String> {
    let what = format!("{file}: kernel {}", k.name);
    let (args, _) = layout(&k.name);
    let explicit: Vec<(u64, u64)> = k.explicit_args().map(|a| (a.offset, a.size)).collect();
    assert_eq!(explicit, args, "{what}: explicit layout");
    let explicit_end = args.iter().map(|(o, s)| o + s).max().unwrap_or(0);

    let buffer = explicit_buffer(k);
    let seg = build_kernarg(k, &buffer, launch).unwrap_or_else(|e| panic!("{what}: {}", e.details));
    let last_end = k.args.iter().map(|a| a.offset + a.size).max().unwrap_or(0);
    assert_eq!(seg.len(), kernarg_size(k), "{what}");
    assert!(
        seg.len() as u64 >= k.kernarg_segment_size.max(last_end),
        "{what}"
    );
    assert_eq!(seg.len() % 8, 0, "{what}: size {}", seg.len());

    // What each byte must be: the caller's explicit area copied as is (padding between
    // arguments included, as LLVM's plugin copies it), then zeros but for the hidden
    // values; the caller's tail padding is not copied.
    let mut expect = vec![0u8; seg.len()];
    expect[..explicit_end as usize].copy_from_slice(&buffer[..explicit_end as usize]);
    for (i, (off, size)) in args.iter().enumerate() {
        for j in 0..*size as usize {
            assert_eq!(expect[*off as usize + j], pattern(i, j));
        }
    }
    let mut kinds = Vec::new();
    for a in &k.args {
        let ArgValueKind::Hidden(kind) = &a.value_kind else {
            continue;
        };
        assert!(
            a.offset >= explicit_end,
            "{what}: hidden {kind} inside explicit"
        );
        let v = expected_hidden(kind, launch).to_le_bytes();
        let w = a.size as usize;
        assert!(w <= 8, "{what}: hidden {kind} is {w} bytes");
        expect[a.offset as usize..a.offset as usize + w].copy_from_slice(&v[..w]);
        kinds.push(kind.clone());
    }
    for (i, (got, want)) in seg.iter().zip(&expect).enumerate() {
        assert_eq!(got, want, "{what}: byte {i} of {}", seg.len());
    }
    kinds
}

/// v5+: the implicit block starts 8-aligned after the explicit arguments, with each
/// field at its fixed ABI offset (read from the raw bytes, not through the metadata).
fn check_v5_block(file: &str, k: &AmdgpuKernel, seg: &[u8], l: &KernargLaunch) {
    let what = format!("{file}: kernel {}", k.name);
    let explicit_end = k.explicit_args().map(|a| a.offset + a.size).max().unwrap();
    let base = round_up(explicit_end, 8);
    let at = |kind: &str| {
        k.args
            .iter()
            .find(|a| a.value_kind == ArgValueKind::Hidden(kind.into()))
            .map(|a| a.offset - base)
    };
    let abi: &[(&str, u64)] = &[
        ("block_count_x", 0),
        ("block_count_y", 4),
        ("block_count_z", 8),
        ("group_size_x", 12),
        ("group_size_y", 14),
        ("group_size_z", 16),
        ("remainder_x", 18),
        ("global_offset_x", 40),
        ("global_offset_z", 56),
        ("grid_dims", 64),
        ("hostcall_buffer", 80),
        ("multigrid_sync_arg", 88),
        ("heap_v1", 96),
        ("default_queue", 104),
        ("completion_action", 112),
        ("dynamic_lds_size", 120),
        ("private_base", 192),
        ("shared_base", 196),
        ("queue_ptr", 200),
    ];
    for (kind, off) in abi {
        if let Some(found) = at(kind) {
            assert_eq!(found, *off, "{what}: hidden_{kind}");
        }
    }
    let b = base as usize;
    let dims = l.dimensions as usize;
    for d in 0..3 {
        let (g, s) = if d < dims {
            (l.num_groups[d], l.group_size[d])
        } else {
            (1, 1)
        };
        assert_eq!(
            read(seg, b + 4 * d, 4),
            u64::from(g),
            "{what}: block count {d}"
        );
        assert_eq!(
            read(seg, b + 12 + 2 * d, 2),
            u64::from(s),
            "{what}: group size {d}"
        );
        assert_eq!(read(seg, b + 18 + 2 * d, 2), 0, "{what}: remainder {d}");
        assert_eq!(read(seg, b + 40 + 8 * d, 8), 0, "{what}: global offset {d}");
    }
    assert_eq!(
        read(seg, b + 64, 2),
        l.dimensions as u64,
        "{what}: grid dims"
    );
    if at("dynamic_lds_size").is_some() {
        assert_eq!(read(seg, b + 120, 4), u64::from(l.dynamic_shared), "{what}");
    }
}

#[test]
fn fixtures_are_the_targets_and_versions_their_names_say() {
    for (file, processor, version) in FIXTURES {
        let co = load(file);
        assert_eq!(co.target.processor, *processor, "{file}");
        assert_eq!(co.target.code_object_version, *version, "{file}");
        let generic = processor.ends_with("-generic");
        assert_eq!(co.target.generic_version, generic.then_some(1), "{file}");
        assert!(!co.kernels.is_empty(), "{file}");
    }
}

#[test]
fn every_argument_lands_where_the_metadata_says() {
    for (file, _, version) in FIXTURES {
        let co = load(file);
        for k in &co.kernels {
            for launch in [LAUNCH_3D, LAUNCH_1D] {
                let kinds = check_segment(file, k, &launch);
                let has = |s: &str| kinds.iter().any(|k| k == s);
                match (k.name.as_str(), *version) {
                    ("hidden_all", 4) => {
                        assert!(has("global_offset_x") && !has("block_count_x"), "{file}");
                    }
                    ("hidden_all" | "sizes" | "dyn_lds", 5..) => {
                        assert!(has("block_count_x") && has("grid_dims"), "{file}");
                        let seg = build_kernarg(k, &explicit_buffer(k), &launch).unwrap();
                        check_v5_block(file, k, &seg, &launch);
                    }
                    _ => {}
                }
                if k.name == "dyn_lds" {
                    assert!(has("dynamic_lds_size"), "{file}: {kinds:?}");
                }
            }
        }
    }
}

#[test]
fn hidden_kinds_of_each_version_are_all_covered() {
    let all = |file: &str| -> Vec<String> {
        let co = load(file);
        let k = co.kernels.iter().find(|k| k.name == "hidden_all").unwrap();
        check_segment(file, k, &LAUNCH_3D)
    };
    let v4 = all("gfx900_v4.co");
    assert_eq!(
        v4,
        [
            "global_offset_x",
            "global_offset_y",
            "global_offset_z",
            "hostcall_buffer",
            "default_queue",
            "completion_action",
            "multigrid_sync_arg"
        ]
    );
    // gfx8 has no aperture registers: v5 passes the private and shared bases.
    let v5 = all("gfx803_v5.co");
    for kind in [
        "remainder_z",
        "heap_v1",
        "private_base",
        "shared_base",
        "queue_ptr",
    ] {
        assert!(v5.iter().any(|k| k == kind), "{kind} in {v5:?}");
    }
}

fn error_for(k: &AmdgpuKernel, explicit: &[u8], launch: &KernargLaunch) -> String {
    let e = build_kernarg(k, explicit, launch).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.details);
    e.details.clone()
}

#[test]
fn wrong_explicit_buffers_are_refused_with_the_sizes() {
    let co = load("gfx90a_xnackon_v5.co");
    let kernel = |n: &str| co.kernels.iter().find(|k| k.name == n).unwrap();
    let scalars = kernel("scalars");
    let full = explicit_buffer(scalars);
    // The exact end (44) and the C struct with tail padding (48) are both accepted.
    assert!(build_kernarg(scalars, &full[..44], &LAUNCH_3D).is_ok());
    assert!(build_kernarg(scalars, &full, &LAUNCH_3D).is_ok());
    let d = error_for(scalars, &full[..40], &LAUNCH_3D);
    assert!(
        d.contains("kernel scalars")
            && d.contains("44 bytes (up to 48")
            && d.contains("the launch gave 40")
            && d.contains("(f) at offset 40"),
        "{d}"
    );
    let d = error_for(scalars, &[0; 56], &LAUNCH_3D);
    assert!(d.contains("the launch gave 56"), "{d}");

    // int4 makes the segment 16-aligned: a 48-byte struct for 33 bytes of arguments.
    let vector = kernel("vector_arg");
    assert_eq!((kernarg_size(vector), kernarg_align(vector)), (48, 16));
    assert_eq!(kernarg_align(scalars), 16);
    assert!(build_kernarg(vector, &explicit_buffer(vector), &LAUNCH_3D).is_ok());

    let none = kernel("no_args");
    assert_eq!(
        build_kernarg(none, &[], &LAUNCH_3D).unwrap(),
        Vec::<u8>::new()
    );
    let d = error_for(none, &[0; 8], &LAUNCH_3D);
    assert!(
        d.contains("kernel no_args takes 0 bytes") && d.contains("gave 8"),
        "{d}"
    );
}

#[test]
fn launches_the_kernel_cannot_run_are_refused() {
    let co = load("gfx1100_v6.co");
    let k = co.kernels.iter().find(|k| k.name == "sizes").unwrap();
    let buf = explicit_buffer(k);
    let mut big = LAUNCH_3D;
    big.group_size = [32, 16, 1];
    let d = error_for(k, &buf, &big);
    assert!(
        d.contains("kernel sizes runs at most 256") && d.contains("32×16×1 = 512"),
        "{d}"
    );
    let mut flat = LAUNCH_3D;
    flat.dimensions = 4;
    let d = error_for(k, &buf, &flat);
    assert!(d.contains("kernel sizes") && d.contains("not 4"), "{d}");
    let mut wide = LAUNCH_1D;
    wide.group_size[0] = 70000;
    let d = error_for(k, &buf, &wide);
    assert!(d.contains("70000"), "{d}");
}

/// Mutated code objects: whatever metadata parses, building its kernels' segments
/// answers a segment or an error, never a panic or a huge allocation.
#[test]
fn mutated_metadata_never_panics() {
    let originals: Vec<Vec<u8>> = FIXTURES
        .iter()
        .map(|(f, _, _)| {
            let path = format!("{}/tests/fixtures/kernarg/{f}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read(path).unwrap()
        })
        .collect();
    let mut rng = Rng(0x6b65_726e_6172_6773);
    let mut built = 0;
    for _ in 0..2000 {
        let input = &originals[rng.below(originals.len())];
        let Ok(co) = parse_amdgpu_code_object(&mutate(&mut rng, input)) else {
            continue;
        };
        for k in &co.kernels {
            let len = explicit_size(k).min(4096) + rng.below(3);
            let explicit = vec![0x5a; len.saturating_sub(1)];
            for launch in [LAUNCH_3D, LAUNCH_1D] {
                if let Ok(seg) = build_kernarg(k, &explicit, &launch) {
                    assert!(seg.len() <= MAX_KERNARG_SIZE);
                    built += 1;
                }
            }
        }
    }
    assert!(
        built > 100,
        "only {built} segments built: the mutations are too harsh"
    );
}
