//! What the host kernel tests share: building `c-tests/kernels/` sources into shared
//! objects at test time (`$CC`, else `cc`, else `clang-19`) and small launch helpers.
#![allow(dead_code)]

use offload::plugin::foundation::error::{Error, ErrorCode};
use offload::plugin::{Device, KernelArgs, LaunchConfig, Plugin, Program};
use offload::plugins::host::HostPlugin;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn compiler() -> &'static str {
    static CC: OnceLock<String> = OnceLock::new();
    CC.get_or_init(|| {
        let candidates = [
            std::env::var("CC").unwrap_or_default(),
            "cc".into(),
            "clang-19".into(),
        ];
        candidates
            .into_iter()
            .filter(|c| !c.is_empty())
            .find(|c| {
                Command::new(c)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .expect("no C compiler: set CC, or install cc or clang-19")
    })
}

/// Runs `program args... -o OUT` in a fresh temporary folder and returns OUT's bytes; the
/// folder is removed at once. `None` if the tool is missing or fails.
pub fn build_with(program: &str, args: &[&str]) -> Option<Vec<u8>> {
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "liboffload-host-kernels-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let status = Command::new(program)
        .args(args)
        .arg("-o")
        .arg(&out)
        .current_dir(root())
        .status();
    let bytes = match status {
        Ok(s) if s.success() => std::fs::read(&out).ok(),
        _ => None,
    };
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

/// A kernel source of `c-tests/kernels/` built as a shared object, cached per flags.
pub fn shared_object(source: &str, defines: &[&str]) -> Vec<u8> {
    type Built = Vec<(String, Vec<u8>)>;
    static CACHE: OnceLock<Mutex<Built>> = OnceLock::new();
    let key = format!("{source} {}", defines.join(" "));
    let cache = CACHE.get_or_init(Default::default);
    if let Some((_, bytes)) = cache.lock().unwrap().iter().find(|(k, _)| *k == key) {
        return bytes.clone();
    }
    let path = format!("c-tests/kernels/{source}");
    let mut args = vec!["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"];
    args.extend(["-shared", "-fPIC", "-O2", "-I", "include", &path]);
    args.extend(defines);
    let bytes = build_with(compiler(), &args)
        .unwrap_or_else(|| panic!("{} failed to build {path}", compiler()));
    cache.lock().unwrap().push((key, bytes.clone()));
    bytes
}

pub fn host_abi() -> Vec<u8> {
    shared_object("host_abi.c", &[])
}

pub fn llvm_convention() -> Vec<u8> {
    shared_object("llvm_convention.c", &[])
}

pub fn device() -> Arc<dyn Device> {
    HostPlugin.devices().remove(0)
}

pub fn load(bytes: &[u8]) -> Arc<dyn Program> {
    device().load_program(bytes).expect("the program loads")
}

pub fn grid1(groups: u32, size: u32) -> LaunchConfig {
    LaunchConfig {
        dimensions: 1,
        num_groups: [groups, 1, 1],
        group_size: [size, 1, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    }
}

pub fn bytes_of<T: Copy>(v: &T) -> Vec<u8> {
    // SAFETY: test values are plain-old-data (integers, floats, pointers, repr(C) structs
    // without padding reads beyond their size).
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
        .to_vec()
}

/// An argument buffer laid out as C lays out a struct of these values: each scalar at
/// its natural alignment (its size), anything else (a struct by value) at 8.
pub fn args(values: &[Vec<u8>]) -> KernelArgs {
    KernelArgs::from_values(values.iter().map(|v| {
        let align = if v.len().is_power_of_two() {
            v.len().min(8)
        } else {
            8
        };
        (v.as_slice(), align)
    }))
}

pub fn code(e: &Error) -> ErrorCode {
    e.code
}

pub fn saxpy_args(a: f32, x: &[f32], y: &mut [f32]) -> KernelArgs {
    args(&[
        bytes_of(&a),
        bytes_of(&(x.as_ptr() as usize)),
        bytes_of(&(y.as_mut_ptr() as usize)),
        bytes_of(&x.len()),
    ])
}

/// `struct saxpy_args` of c-tests/kernels/host_abi.h, as C lays it out.
#[repr(C)]
pub struct SaxpyArgs {
    pub a: f32,
    pub x: *const f32,
    pub y: *mut f32,
    pub n: usize,
}
