//! The stand-in CUDA driver of the tests, `stand_in_libcuda.c`, built at test time: every
//! entry point the backend resolves, with cuda.h's prototypes over host memory, and the
//! behaviour NVIDIA documents where a backend can get it wrong (asynchronous streams,
//! host functions on one callback thread, sticky errors after a fault, pageable copies
//! that synchronise, untimed events, shared-memory limits). It checks what it is given
//! and records it; `Mock` reads its counters and works its controls.
#![allow(dead_code)]

#[path = "../stand_in_build/mod.rs"]
mod stand_in_build;

use stand_in_build::build_stand_in;

/// Builds the stand-in as `<tag>/libcuda.so.1` (see `build_stand_in`).
pub fn build_mock_driver(tag: &str) -> Option<std::path::PathBuf> {
    build_stand_in(
        "cuda_support/stand_in_libcuda.c",
        "libcuda.so.1",
        &format!("mock-cuda-{tag}"),
    )
}

/// Builds the stand-in as `<tag>/libcuda.so.1` and makes it this process's CUDA driver
/// (`OFFLOAD_CUDA_LIBRARY`, and `OFFLOAD_PLATFORMS=cuda,host`, set before `olInit` reads
/// them: the caller is a test binary of its own), with the loaded copy for its counters.
/// `None` without a C compiler.
pub fn driver_for_this_process(tag: &str) -> Option<(std::path::PathBuf, Mock)> {
    let path = build_mock_driver(tag)?;
    std::env::set_var("OFFLOAD_CUDA_LIBRARY", &path);
    std::env::set_var("OFFLOAD_PLATFORMS", "cuda,host");
    // SAFETY: the stand-in has no initialisers; the library opens the same file, so this
    // is the same loaded copy with the same state.
    let library = unsafe { libloading::Library::new(&path) }.unwrap();
    Some((path, Mock { library }))
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
