//! A launch on a CUDA device recorded with `OFFLOAD_RECORD` and replayed by
//! `offload-replay`, against the stand-in driver (tests/cuda_support): the recorded
//! memory placed at its address through the driver's virtual memory management, the
//! output verified, and a smaller grid found to differ where the kernel stops.

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/cuda_support/mod.rs"]
mod cuda_support;

use common::*;
use cuda_support::driver_for_this_process;
use offload::capi::*;
use std::ffi::c_void;
use std::process::Command;
use std::ptr::null_mut;

const PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n\0";
/// Far from where a process's program, heap and libraries lie, in both processes.
const AT: usize = 0x2000_0000_0000;
const N: usize = 1024;

fn replay(driver: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_offload-replay"))
        .args(args)
        .env("OFFLOAD_CUDA_LIBRARY", driver)
        .env("OFFLOAD_PLATFORMS", "cuda,host")
        .env_remove("OFFLOAD_RECORD")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_cuda_launch_replays_at_its_addresses_and_verifies() {
    let Some((driver, _)) = driver_for_this_process("replay") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    let dir = std::env::temp_dir().join(format!("offload-replay-cuda-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var("OFFLOAD_RECORD", &dir);

    ok(olInit());
    let gpu = first_of(OL_DEVICE_TYPE_GPU);
    let host = first_of(OL_DEVICE_TYPE_HOST);
    let (program, kernel) = program_with_kernel(gpu, PTX, c"scale");
    let mut x: *mut c_void = null_mut();
    ok(olMemAllocAt(
        gpu,
        OL_ALLOC_TYPE_DEVICE,
        N * 4,
        AT as *mut c_void,
        &mut x,
    ));
    let data: Vec<f32> = (0..N).map(|i| i as f32 + 0.5).collect();
    ok(olMemcpy(
        null_mut(),
        x,
        gpu,
        data.as_ptr().cast(),
        host,
        N * 4,
    ));
    #[repr(C)]
    struct Args {
        x: *mut c_void,
        a: f32,
        n: u64,
    }
    let args = Args {
        x,
        a: 3.0,
        n: N as u64,
    };
    let mut queue = null_mut();
    ok(olCreateQueue(gpu, &mut queue));
    ok(olLaunchKernel(
        queue,
        gpu,
        kernel,
        (&args as *const Args).cast(),
        std::mem::size_of::<Args>(),
        &launch_args(4, 256),
    ));
    ok(olSyncQueue(queue));
    let mut back = vec![0f32; N];
    ok(olMemcpy(
        null_mut(),
        back.as_mut_ptr().cast(),
        host,
        x,
        gpu,
        N * 4,
    ));
    assert_eq!(back, data.iter().map(|v| v * 3.0).collect::<Vec<_>>());
    ok(olDestroyQueue(queue));
    ok(olMemFree(x));
    ok(olDestroyProgram(program));
    ok(olShutDown());

    let record = dir.to_str().unwrap();
    let (fine, text) = replay(&driver, &["--verify", "--repeat", "3", record]);
    assert!(fine, "{text}");
    assert!(text.contains("scale on Mock GPU 0"), "{text}");
    assert!(text.contains("groups [4, 1, 1] of [256, 1, 1]"), "{text}");
    assert!(text.contains(": verified"), "{text}");

    // Half the threads: the second half of x is left as it was recorded.
    let (fine, text) = replay(&driver, &["--verify", "--groups", "2,1,1", record]);
    assert!(!fine, "a differing replay fails: {text}");
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let recorded = bytes(&back);
    let half: Vec<f32> = (0..N)
        .map(|i| if i < 512 { back[i] } else { data[i] })
        .collect();
    let first = recorded
        .iter()
        .zip(bytes(&half))
        .position(|(a, b)| *a != b)
        .unwrap();
    assert!((2048..2052).contains(&first));
    assert!(
        text.contains(&format!("differs at byte {first} ")),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
