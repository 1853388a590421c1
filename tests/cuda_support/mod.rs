//! The stand-in CUDA driver of the tests: `stand_in_libcuda.c`, built at test time, and
//! a handle on its counters and controls.
#![allow(dead_code)]

use std::process::Command;

//
// A stand-in `libcuda` built from `cuda_support/stand_in_libcuda.c` at test time: every
// entry point the backend resolves, with cuda.h's prototypes over host memory, and the
// behaviour NVIDIA documents where a backend can get it wrong (asynchronous streams, host
// functions on one callback thread, sticky errors after a fault, pageable copies that
// synchronise, untimed events, shared-memory limits). It checks what it is given and
// records it for the test to inspect.

pub const MOCK_DRIVER: &str = include_str!("stand_in_libcuda.c");

/// Builds the stand-in into a temporary folder; `None` without a C compiler (a compiler
/// that fails on it fails the test). Builds it as `<tag>/libcuda.so.1`: each test gets its own file, so its own
/// loaded copy with its own counters (tests run in parallel threads of one process).
pub fn build_mock_driver(tag: &str) -> Option<std::path::PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("liboffload-mock-cuda-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("mock_libcuda.c");
    std::fs::write(&source, MOCK_DRIVER).unwrap();
    let library = dir.join("libcuda.so.1");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&compiler)
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-std=gnu11",
            "-Wall",
            "-pthread",
            "-o",
        ])
        .arg(&library)
        .arg(&source)
        .output()
        .ok()?;
    assert!(
        output.status.success(),
        "{compiler} could not build the mock driver:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(library)
}

pub struct Mock {
    pub library: libloading::Library,
}

impl Mock {
    pub fn get(&self, key: &str) -> i64 {
        let key = std::ffi::CString::new(key).unwrap();
        // SAFETY: `mock_get` is `long long mock_get(const char *)` in MOCK_DRIVER.
        unsafe {
            let f = self
                .library
                .get::<unsafe extern "C" fn(*const std::ffi::c_char) -> i64>(b"mock_get")
                .unwrap();
            f(key.as_ptr())
        }
    }

    /// A call of the stand-in's own `void name(args)`.
    pub fn call<A>(&self, name: &[u8], arg: A) {
        // SAFETY: the names used are the stand-in's `void mock_hold(CUstream)` and
        // `void mock_set_current(void *)`, each taking one pointer-sized value.
        unsafe {
            let f = self.library.get::<unsafe extern "C" fn(A)>(name).unwrap();
            f(arg)
        }
    }

    /// Holds `stream` (a stand-in `CUstream`) until `release`.
    pub fn hold(&self, stream: *mut std::ffi::c_void) {
        self.call(b"mock_hold", stream);
    }

    /// Lets every held kernel end.
    pub fn release(&self) {
        // SAFETY: `void mock_release(void)` in the stand-in.
        unsafe {
            let f = self
                .library
                .get::<unsafe extern "C" fn()>(b"mock_release")
                .unwrap();
            f()
        }
    }

    pub fn last_args(&self) -> Vec<u8> {
        let mut out = vec![0u8; 256];
        // SAFETY: `mock_last_args(unsigned char *, size_t)` writes at most `cap` bytes.
        let n = unsafe {
            let f = self
                .library
                .get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"mock_last_args")
                .unwrap();
            f(out.as_mut_ptr(), out.len())
        };
        out.truncate(n);
        out
    }
}
