//! Host device programs and kernels that run, driven through the plugin traits: the C
//! kernels of `c-tests/kernels/` are compiled at test time into shared objects whose
//! bytes are loaded with `Device::load_program`. Refusals are in `host_kernel_errors.rs`.

mod host_support;

use host_support::*;
use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::foundation::worker_pool::WorkerPool;
use offload::plugin::{Kernel, KernelArgs, LaunchConfig, Program, SymbolKind};
use offload::plugins::host::HostProgram;
use std::sync::Arc;
use std::time::Instant;

#[test]
fn saxpy_over_many_groups() {
    let program = load(&host_abi());
    let kernel = program.kernel("saxpy").unwrap();
    assert_eq!(kernel.name(), "saxpy");
    // struct saxpy_args { float a; const float *x; float *y; size_t n; }: 32 bytes.
    kernel
        .check_args(&KernelArgs::from_bytes(&[0; 32]))
        .unwrap();
    let e = kernel
        .check_args(&KernelArgs::from_bytes(&[0; 28]))
        .unwrap_err();
    assert!(
        e.details.contains("32-byte") && e.details.contains("is 28"),
        "{e}"
    );
    let n: usize = (1 << 20) + 3;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let groups = n.div_ceil(256) as u32;
    kernel
        .launch(&grid1(groups, 256), &saxpy_args(2.0, &x, &mut y))
        .unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32 + (i % 7) as f32, "y[{i}]");
    }
}

#[test]
fn reduction_uses_dynamic_shared_memory() {
    let program = load(&host_abi());
    let kernel = program.kernel("reduce").unwrap();
    let group = 128usize;
    let groups = 300usize;
    let input: Vec<u32> = (0..(group * groups) as u32).map(|i| i * 3 + 1).collect();
    let mut partial = vec![0u64; groups];
    let config = LaunchConfig {
        dyn_shared_memory: group * 8,
        ..grid1(groups as u32, group as u32)
    };
    let a = args(&[
        bytes_of(&(input.as_ptr() as usize)),
        bytes_of(&(partial.as_mut_ptr() as usize)),
    ]);
    for _ in 0..3 {
        partial.iter_mut().for_each(|p| *p = 0);
        kernel.launch(&config, &a).unwrap();
        for (g, p) in partial.iter().enumerate() {
            let want: u64 = input[g * group..(g + 1) * group]
                .iter()
                .map(|&v| v as u64)
                .sum();
            assert_eq!(*p, want, "group {g}");
        }
    }
    assert_eq!(
        partial.iter().sum::<u64>(),
        input.iter().map(|&v| v as u64).sum::<u64>()
    );
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ids {
    gx: u32,
    gy: u32,
    gz: u32,
    group_linear: u32,
    dims: u32,
    aligned: u32,
}

#[test]
fn three_dimensional_grid_writes_global_ids() {
    let program = load(&host_abi());
    let kernel = program.kernel("grid3d").unwrap();
    let (groups, size) = ([3u32, 2, 4], [4u32, 3, 2]);
    let extent: Vec<usize> = (0..3).map(|d| (groups[d] * size[d]) as usize).collect();
    let mut out = vec![Ids::default(); extent.iter().product()];
    for dyn_shared_memory in [0, 100] {
        out.iter_mut().for_each(|r| *r = Ids::default());
        let config = LaunchConfig {
            dimensions: 3,
            num_groups: groups,
            group_size: size,
            dyn_shared_memory,
            cooperative: false,
        };
        kernel
            .launch(&config, &args(&[bytes_of(&(out.as_mut_ptr() as usize))]))
            .unwrap();
        for z in 0..extent[2] {
            for y in 0..extent[1] {
                for x in 0..extent[0] {
                    let r = out[(z * extent[1] + y) * extent[0] + x];
                    let g = [x / 4, y / 3, z / 2];
                    let linear = (g[2] * 2 + g[1]) * 3 + g[0];
                    let want = Ids {
                        gx: x as u32,
                        gy: y as u32,
                        gz: z as u32,
                        group_linear: linear as u32,
                        dims: 3,
                        aligned: 1,
                    };
                    assert_eq!(r, want, "item ({x}, {y}, {z})");
                }
            }
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Triple {
    a: f64,
    b: i64,
    c: i32,
    d: u8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ScalarsOut {
    c: i8,
    s: i16,
    f: f32,
    d: f64,
    p: usize,
    t: Triple,
}

#[test]
fn arguments_of_every_size_arrive_by_value() {
    assert_eq!(std::mem::size_of::<Triple>(), 24);
    let program = load(&host_abi());
    let kernel = program.kernel("scalars").unwrap();
    let mut out = ScalarsOut::default();
    let t = Triple {
        a: 3.5,
        b: -7_000_000_000,
        c: 42,
        d: b'x',
    };
    // The struct's padding must not be read as uninitialised memory: copy its fields.
    let mut t_bytes = vec![0u8; 24];
    t_bytes[0..8].copy_from_slice(&t.a.to_ne_bytes());
    t_bytes[8..16].copy_from_slice(&t.b.to_ne_bytes());
    t_bytes[16..20].copy_from_slice(&t.c.to_ne_bytes());
    t_bytes[20] = t.d;
    let a = args(&[
        bytes_of(&(&mut out as *mut ScalarsOut as usize)),
        vec![(-5i8) as u8],
        (-1234i16).to_ne_bytes().to_vec(),
        1.5f32.to_ne_bytes().to_vec(),
        (-2.25f64).to_ne_bytes().to_vec(),
        0xdead_beefusize.to_ne_bytes().to_vec(),
        t_bytes,
    ]);
    kernel.launch(&grid1(1, 1), &a).unwrap();
    assert_eq!(
        out,
        ScalarsOut {
            c: -5,
            s: -1234,
            f: 1.5,
            d: -2.25,
            p: 0xdead_beef,
            t,
        }
    );
}

fn read_i64(address: usize) -> i64 {
    // SAFETY: the address is a live program's 8-byte global variable.
    unsafe { std::ptr::read_volatile(address as *const i64) }
}

#[test]
fn kernels_write_global_variables_and_programs_coexist() {
    let one = load(&shared_object("host_abi.c", &["-DVARIANT=1"]));
    let two = load(&shared_object("host_abi.c", &["-DVARIANT=2"]));
    let again = load(&shared_object("host_abi.c", &["-DVARIANT=1"]));
    let counters: Vec<_> = [&one, &two, &again]
        .iter()
        .map(|p| p.global("counter").unwrap())
        .collect();
    assert!(counters.iter().all(|g| g.size == 8));
    assert_ne!(counters[0].address, counters[1].address);
    assert_ne!(counters[0].address, counters[2].address);
    assert_eq!(read_i64(counters[0].address), 100);
    assert_eq!(read_i64(counters[1].address), 200);

    let bump = |p: &Arc<dyn Program>, by: i32| {
        p.kernel("bump")
            .unwrap()
            .launch(&grid1(1, 1), &args(&[by.to_ne_bytes().to_vec()]))
            .unwrap()
    };
    bump(&one, 5);
    bump(&two, 7);
    bump(&two, 1);
    assert_eq!(read_i64(counters[0].address), 105);
    assert_eq!(read_i64(counters[1].address), 208);
    assert_eq!(
        read_i64(counters[2].address),
        100,
        "same bytes, separate program"
    );
    assert_eq!(one.global("variant").unwrap().size, 4);
    assert_eq!(one.symbol_kind("counter"), Some(SymbolKind::GlobalVariable));
    assert_eq!(one.symbol_kind("bump"), Some(SymbolKind::Kernel));
    assert_eq!(one.symbol_kind("llvm_add"), Some(SymbolKind::Kernel));
}

/// The mapping of /proc/self/maps that holds `address`, if any.
fn mapping_of(address: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .find(|line| {
            let range = line.split_whitespace().next().unwrap_or("");
            let (lo, hi) = range.split_once('-').unwrap_or(("0", "0"));
            let lo = usize::from_str_radix(lo, 16).unwrap_or(0);
            let hi = usize::from_str_radix(hi, 16).unwrap_or(0);
            (lo..hi).contains(&address)
        })
        .map(|line| {
            line.split_whitespace()
                .skip(5)
                .collect::<Vec<_>>()
                .join(" ")
        })
}

#[test]
fn programs_load_from_memory_and_unload() {
    let bytes = host_abi();
    let direct = HostProgram::load(&bytes, 1 << 20).unwrap();
    assert!(
        direct.loaded_from().starts_with("/proc/self/fd/"),
        "{}",
        direct.loaded_from()
    );

    let program = load(&bytes);
    let address = program.global("counter").unwrap().address;
    let file = mapping_of(address).expect("the global variable is mapped");
    assert!(
        file.starts_with("/memfd:liboffload-program"),
        "the program is mapped from {file:?}, not from an anonymous memory file"
    );

    // A kernel keeps its program loaded.
    let kernel = program.kernel("bump").unwrap();
    drop(program);
    kernel
        .launch(&grid1(1, 1), &args(&[1i32.to_ne_bytes().to_vec()]))
        .unwrap();
    assert_eq!(read_i64(address), 101);
    drop(kernel);
    let after = mapping_of(address);
    assert!(
        !after
            .as_deref()
            .unwrap_or("")
            .starts_with("/memfd:liboffload-program"),
        "still mapped after the last reference: {after:?}"
    );
}

#[test]
fn llvm_convention_kernels_are_called_once_with_pointer_sized_values() {
    let program = load(&llvm_convention());
    let k = program.kernel("k").unwrap();
    k.check_args(&KernelArgs::from_bytes(&[0; 24])).unwrap();
    assert!(k.check_args(&KernelArgs::from_bytes(&[0; 20])).is_err());
    assert_eq!(k.optimal_group_size(0).unwrap(), 1);
    let mut dst = [0i64; 2];
    let config = LaunchConfig {
        dimensions: 2,
        num_groups: [4, 3, 1],
        group_size: [8, 2, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    let a = args(&[
        bytes_of(&(dst.as_mut_ptr() as usize)),
        bytes_of(&0x1234_5678usize),
    ]);
    k.launch(&config, &a).unwrap();
    assert_eq!(dst, [0x1234_5678, 1], "called once for the whole grid");
    let calls = program.global("calls").unwrap();
    assert_eq!(calls.size, 4);
    // SAFETY: `calls` is the program's live 4-byte int.
    assert_eq!(
        unsafe { std::ptr::read_volatile(calls.address as *const i32) },
        1
    );

    // Each argument is one pointer-sized slot of the buffer, whatever the value's type.
    let mut out = [0u64; 3];
    program
        .kernel("widths")
        .unwrap()
        .launch(
            &grid1(1, 1),
            &args(&[
                bytes_of(&(out.as_mut_ptr() as usize)),
                bytes_of(&0xffusize),
                bytes_of(&0xffffusize),
                bytes_of(&0xffff_ffffusize),
            ]),
        )
        .unwrap();
    assert_eq!(out, [0xff, 0xffff, 0xffff_ffff]);

    program
        .kernel("nothing")
        .unwrap()
        .launch(&grid1(1, 1), &KernelArgs::default())
        .unwrap();

    // A buffer that is not a whole number of slots cannot be split into arguments.
    let e = k
        .launch(&grid1(1, 1), &KernelArgs::from_bytes(&[0; 12]))
        .unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument);
    assert!(
        e.details.contains("multiple of 8") && e.details.contains("not 12"),
        "{e}"
    );
    assert!(e.details.contains("LLVM"), "{e}");

    // An unmarked function inside a program of the host ABI follows LLVM's convention too.
    let abi = load(&host_abi());
    let mut x = 40i64;
    abi.kernel("llvm_add")
        .unwrap()
        .launch(
            &grid1(1, 1),
            &args(&[bytes_of(&(&mut x as *mut i64 as usize)), bytes_of(&2usize)]),
        )
        .unwrap();
    assert_eq!(x, 42);
}

#[test]
fn hidden_visibility_builds_still_export_kernels_and_globals() {
    let program = load(&shared_object(
        "host_abi.c",
        &["-fvisibility=hidden", "-DVARIANT=3"],
    ));
    assert_eq!(program.symbol_kind("saxpy"), Some(SymbolKind::Kernel));
    assert_eq!(
        program.symbol_kind("counter"),
        Some(SymbolKind::GlobalVariable)
    );
    // Plain functions are hidden by -fvisibility=hidden: not symbols of the program.
    assert_eq!(program.symbol_kind("helper_function"), None);
    let counter = program.global("counter").unwrap();
    assert_eq!(read_i64(counter.address), 300);
    let args = args(&[3i32.to_ne_bytes().to_vec()]);
    program
        .kernel("bump")
        .unwrap()
        .launch(&grid1(1, 1), &args)
        .unwrap();
    assert_eq!(read_i64(counter.address), 303);
    // A buffer of another size than the kernel's argument struct is refused, never read
    // out of bounds.
    let e = program
        .kernel("bump")
        .unwrap()
        .launch(&grid1(1, 1), &KernelArgs::from_bytes(&[0; 2]))
        .unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument);
}

#[test]
fn concurrent_launches_and_launches_from_pool_workers() {
    let program = load(&host_abi());
    let reduce = program.kernel("reduce").unwrap();
    let run = |seed: u32| {
        let group = 64usize;
        let groups = 97usize;
        let input: Vec<u32> = (0..(group * groups) as u32).map(|i| i ^ seed).collect();
        let mut partial = vec![0u64; groups];
        let config = LaunchConfig {
            dyn_shared_memory: group * 8 + seed as usize, // sizes differ per caller
            ..grid1(groups as u32, group as u32)
        };
        let a = args(&[
            bytes_of(&(input.as_ptr() as usize)),
            bytes_of(&(partial.as_mut_ptr() as usize)),
        ]);
        for _ in 0..20 {
            reduce.launch(&config, &a).unwrap();
            for (g, p) in partial.iter().enumerate() {
                let want: u64 = input[g * group..(g + 1) * group]
                    .iter()
                    .map(|&v| v as u64)
                    .sum();
                assert_eq!(*p, want, "caller {seed}, group {g}");
            }
        }
    };
    std::thread::scope(|s| {
        for seed in 1..=4 {
            s.spawn(move || run(seed));
        }
    });

    // A queued launch runs on a pool worker; its groups still spread over the pool.
    let (done, wait) = std::sync::mpsc::channel();
    let kernel = program.kernel("saxpy").unwrap();
    WorkerPool::global().spawn(move || {
        let n = 100_000usize;
        let x = vec![1.0f32; n];
        let mut y = vec![2.0f32; n];
        let r = kernel.launch(
            &grid1(n.div_ceil(256) as u32, 256),
            &saxpy_args(3.0, &x, &mut y),
        );
        done.send(r.map(|_| y.iter().all(|&v| v == 5.0))).unwrap();
    });
    assert_eq!(wait.recv().unwrap(), Ok(true));
}

/// Average cost of one launch of `kernel`, in microseconds.
fn launch_cost_us(kernel: &dyn Kernel, config: &LaunchConfig, args: &KernelArgs, n: u32) -> f64 {
    for _ in 0..n / 10 {
        kernel.launch(config, args).unwrap();
    }
    let t = Instant::now();
    for _ in 0..n {
        kernel.launch(config, args).unwrap();
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

/// Timing: run with `cargo test --release --test host_kernels -- --ignored --test-threads=1`.
#[test]
#[ignore = "timing; run alone in release mode"]
fn empty_launch_costs_a_function_call() {
    let program = load(&host_abi());
    let empty = program.kernel("empty").unwrap();
    let best = (0..5)
        .map(|_| {
            launch_cost_us(
                empty.as_ref(),
                &grid1(1, 1),
                &KernelArgs::default(),
                1_000_000,
            )
        })
        .fold(f64::MAX, f64::min);
    println!("empty kernel, 1 group, synchronous: {best:.3} us per launch");
    let llvm = load(&llvm_convention());
    let nothing = llvm.kernel("nothing").unwrap();
    let ffi = launch_cost_us(
        nothing.as_ref(),
        &grid1(1, 1),
        &KernelArgs::default(),
        200_000,
    );
    println!("empty LLVM-convention kernel through libffi: {ffi:.3} us per launch");
    assert!(best <= 0.3, "{best:.3} us per empty launch");
}

/// Timing: run with `cargo test --release --test host_kernels -- --ignored --test-threads=1`.
#[test]
#[ignore = "timing; run alone in release mode"]
fn saxpy_scales_over_cores() {
    let program = load(&host_abi());
    let saxpy = program.kernel("saxpy").unwrap();
    let n = 1usize << 24;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; n];
    let a = saxpy_args(0.5, &x, &mut y);
    let one = LaunchConfig {
        group_size: [n as u32, 1, 1],
        ..grid1(1, 1)
    };
    let many = grid1((n / 4096) as u32, 4096);
    let threads = WorkerPool::global().threads();
    let launch = |config: &LaunchConfig| {
        let t = Instant::now();
        saxpy.launch(config, &a).unwrap();
        t.elapsed().as_secs_f64()
    };
    // What this machine allows: the same loop on plain threads, one slice each.
    let (x, y) = (x.as_ptr() as usize, y.as_mut_ptr() as usize);
    let plain = |split: usize| {
        let t = Instant::now();
        std::thread::scope(|s| {
            let chunk = n.div_ceil(split);
            for begin in (0..n).step_by(chunk) {
                let end = (begin + chunk).min(n);
                s.spawn(move || {
                    // SAFETY: each thread owns a disjoint range of `y`; `x` is only read.
                    let (xs, ys) = unsafe {
                        (
                            std::slice::from_raw_parts((x as *const f32).add(begin), end - begin),
                            std::slice::from_raw_parts_mut((y as *mut f32).add(begin), end - begin),
                        )
                    };
                    for (yv, xv) in ys.iter_mut().zip(xs) {
                        *yv += 0.5 * *xv;
                    }
                });
            }
        });
        t.elapsed().as_secs_f64()
    };
    // Interleaved rounds, best of each, so that drifting load hits all four alike.
    let mut best = [f64::MAX; 4];
    for _ in 0..9 {
        let round = [launch(&one), launch(&many), plain(1), plain(threads)];
        for (b, r) in best.iter_mut().zip(round) {
            *b = b.min(r);
        }
    }
    let [serial, parallel, alone, together] = best;
    let ceiling = alone / together;
    println!(
        "saxpy 2^24: 1 group {:.2} ms, {} groups on {threads} threads {:.2} ms, speedup \
         {:.2}x (plain threads on this machine: {ceiling:.2}x)",
        serial * 1e3,
        n / 4096,
        parallel * 1e3,
        serial / parallel
    );
    if threads >= 2 && ceiling >= 1.9 {
        assert!(serial / parallel >= 1.8, "speedup {:.2}", serial / parallel);
    } else {
        println!("this machine cannot show a 1.8x speedup now (busy cores or memory-bound)");
    }
}
