//! The CUDA platform where there may be no CUDA: the library and C API must work, with
//! the GPUs the driver reports (none on a machine without libcuda or a GPU) and the host
//! device, and a missing driver must be explained in the trace, not be an error.

mod common;

use common::*;
use offload::capi::*;
use offload::plugins::cuda::{CudaPlugin, LIBRARY};
use std::ffi::c_void;
use std::process::Command;
use std::ptr::null_mut;

/// Set in the child process of `a_missing_driver_is_traced`.
const CHILD: &str = "OFFLOAD_TEST_CUDA_CHILD";

fn platform_str(platform: ol_platform_handle_t, key: ol_platform_info_raw_t) -> String {
    let mut size = 0usize;
    ok(olGetPlatformInfoSize(platform, key, &mut size));
    let mut text = vec![0u8; size];
    ok(olGetPlatformInfo(
        platform,
        key,
        size,
        text.as_mut_ptr() as *mut c_void,
    ));
    String::from_utf8_lossy(&text[..size - 1]).into_owned()
}

#[test]
fn the_host_device_works_beside_the_cuda_platform() {
    if std::env::var_os(CHILD).is_some() {
        return; // the child process runs only `missing_driver_child`
    }
    // OFFLOAD_PLATFORMS may leave CUDA out (unset or empty: every platform).
    let cuda_chosen = std::env::var("OFFLOAD_PLATFORMS").map_or(true, |list| {
        list.trim().is_empty()
            || list
                .split(',')
                .any(|p| p.trim().eq_ignore_ascii_case("cuda"))
    });
    let gpus = if cuda_chosen {
        CudaPlugin::new().open_devices().map_or(0, |d| d.len())
    } else {
        0
    };

    ok(olInit());
    let all = devices();
    assert_eq!(
        all.len(),
        gpus + 1,
        "every GPU the driver reports, then the host"
    );
    let host = *all.last().unwrap();
    assert_eq!(
        device_info_u32(host, OL_DEVICE_INFO_TYPE),
        OL_DEVICE_TYPE_HOST
    );
    for &gpu in &all[..gpus] {
        assert_eq!(
            device_info_u32(gpu, OL_DEVICE_INFO_TYPE),
            OL_DEVICE_TYPE_GPU
        );
        assert_eq!(device_info_u32(gpu, OL_DEVICE_INFO_VENDOR_ID), 0x10de);
    }

    // The CUDA platform is listed even with no device, and says what it is.
    let cuda: Vec<_> = platforms()
        .into_iter()
        .filter(|&p| {
            let mut backend = 0u32;
            ok(olGetPlatformInfo(
                p,
                OL_PLATFORM_INFO_BACKEND,
                4,
                &mut backend as *mut u32 as *mut c_void,
            ));
            backend == OL_PLATFORM_BACKEND_CUDA
        })
        .collect();
    if cuda_chosen {
        assert_eq!(cuda.len(), 1);
        assert_eq!(platform_str(cuda[0], OL_PLATFORM_INFO_NAME), "CUDA");
        assert_eq!(
            platform_str(cuda[0], OL_PLATFORM_INFO_VENDOR_NAME),
            "NVIDIA Corporation"
        );
        assert!(!platform_str(cuda[0], OL_PLATFORM_INFO_VERSION).is_empty());
    } else {
        assert!(cuda.is_empty());
    }

    // The host device still allocates, copies and frees.
    let mut p: *mut c_void = null_mut();
    ok(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 64, &mut p));
    let src = [7u8; 64];
    ok(olMemcpy(
        null_mut(),
        p,
        host,
        src.as_ptr() as *const c_void,
        host,
        64,
    ));
    let mut back = [0u8; 64];
    ok(olMemcpy(
        null_mut(),
        back.as_mut_ptr() as *mut c_void,
        host,
        p,
        host,
        64,
    ));
    assert_eq!(back, src);
    ok(olMemFree(p));
    ok(olShutDown());
}

/// Run by `a_missing_driver_is_traced` in a child process with the driver pointed at a
/// file that does not exist; does nothing otherwise.
#[test]
fn missing_driver_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    ok(olInit());
    let all = devices();
    assert_eq!(all.len(), 1, "only the host device");
    assert_eq!(
        device_info_u32(all[0], OL_DEVICE_INFO_TYPE),
        OL_DEVICE_TYPE_HOST
    );
    ok(olShutDown());
}

#[test]
fn a_missing_driver_is_traced() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let missing = "/nonexistent/offload-test/libcuda.so.1";
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "missing_driver_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(LIBRARY.env, missing)
        .env("OFFLOAD_TRACE", "1")
        .env_remove("OFFLOAD_PLATFORMS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child test ran:\n{stdout}");
    let line = stderr
        .lines()
        .find(|l| l.contains("CUDA: no devices:"))
        .unwrap_or_else(|| panic!("no reason in the trace:\n{stderr}"));
    assert!(
        line.contains(&format!("cannot open {missing}")),
        "the reason names the library: {line}"
    );
}

// ---- The whole device path against a mock driver ------------------------------------
//
// A stand-in `libcuda` built from the C below at test time: every entry point the
// backend resolves, declared with cuda.h's prototypes and host-memory semantics, so the
// backend's table, wrappers, device, program and kernel code run end to end without a
// GPU. It checks what it is given (alignment of 16/32-bit fills, the layout of the
// `extra` array, the cooperative attribute) and records it for the test to inspect.

const MOCK_DRIVER: &str = r#"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef struct { char bytes[16]; } CUuuid;
typedef struct { unsigned id; char pad[4]; union { char raw[64]; int cooperative; } value; } CUlaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream; CUlaunchAttribute *attrs; unsigned numAttrs;
} CUlaunchConfig;

static char contexts[2];
static long long ctx_refs, ctx_sets, live_allocs, live_modules, d8, d16, d32, copies;
static long long register_flags, last_shared, last_cooperative, dyn_allowed, b2d, bad_extra;
static unsigned last_grid[3], last_block[3];
static unsigned char last_args[256];
static size_t last_args_size;
static void *registered;
static __thread CUcontext current;
static int counter_global = 41;
static char kernel_scale;

long long mock_get(const char *key) {
#define K(x) if (!strcmp(key, #x)) return x;
  K(ctx_refs) K(ctx_sets) K(live_allocs) K(live_modules) K(d8) K(d16) K(d32) K(copies)
  K(register_flags) K(last_shared) K(last_cooperative) K(dyn_allowed) K(b2d) K(bad_extra)
  if (!strcmp(key, "grid")) return last_grid[0] * 10000LL + last_grid[1] * 100 + last_grid[2];
  if (!strcmp(key, "block")) return last_block[0] * 10000LL + last_block[1] * 100 + last_block[2];
  return -1;
}
size_t mock_last_args(unsigned char *out, size_t cap) {
  memcpy(out, last_args, last_args_size < cap ? last_args_size : cap);
  return last_args_size;
}

CUresult cuInit(unsigned flags) { return flags ? 1 : 0; }
CUresult cuDriverGetVersion(int *v) { *v = 12080; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return 0;
  case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
  case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
  case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0;
  default: *s = NULL; return 1;
  }
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case 1: *s = "invalid argument"; return 0;
  case 2: *s = "out of memory"; return 0;
  case 218: *s = "a PTX JIT compilation failed"; return 0;
  case 500: *s = "named symbol not found"; return 0;
  default: *s = NULL; return 1;
  }
}
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { if (ordinal != 0) return 101; *d = ordinal; return 0; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { snprintf(name, len, "Mock GPU %d", d); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  (void)d;
  switch (attr) {
  case 1: *v = 1024; break;            /* threads per block */
  case 2: case 3: *v = 1024; break;    /* block x, y */
  case 4: *v = 64; break;
  case 5: *v = 2147483647; break;      /* grid x */
  case 6: case 7: *v = 65535; break;
  case 8: *v = 49152; break;           /* shared per block */
  case 10: *v = 32; break;             /* warp */
  case 13: *v = 1410000; break;        /* clock, kHz */
  case 16: *v = 108; break;            /* SMs */
  case 36: *v = 1593000; break;        /* memory clock, kHz */
  case 75: *v = 8; break;              /* compute capability 8.0 */
  case 76: *v = 0; break;
  case 95: *v = 1; break;              /* cooperative launch */
  case 97: *v = 166912; break;         /* shared opt-in */
  default: *v = 0;
  }
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { (void)d; *bytes = 40ull << 30; return 0; }
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { (void)d; memset(u->bytes, 0xff, 16); return 0; }
CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) {
  (void)d; for (int i = 0; i < 16; i++) u->bytes[i] = (char)(i * 17); return 0;
}
CUresult cuDeviceCanAccessPeer(int *can, CUdevice a, CUdevice b) { (void)a; (void)b; *can = 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { ctx_refs++; *c = &contexts[d]; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; if (ctx_refs <= 0) return 201; ctx_refs--; return 0; }
CUresult cuCtxSetCurrent(CUcontext c) { current = c; ctx_sets++; return 0; }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = current; return 0; }
CUresult cuCtxSynchronize(void) { return current ? 0 : 201; }
CUresult cuCtxEnablePeerAccess(CUcontext c, unsigned f) { (void)c; (void)f; return 704; }

static void *take(size_t n, size_t align) {
  void *p = aligned_alloc(align, (n + align - 1) / align * align);
  if (p) live_allocs++;
  return p;
}
#define NEED_CONTEXT if (!current) return 201;
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  NEED_CONTEXT if (n > (1ull << 40)) return 2;
  *p = (CUdeviceptr)take(n, 256); return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { NEED_CONTEXT free((void *)p); live_allocs--; return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { NEED_CONTEXT *p = take(n, 4096); return 0; }
CUresult cuMemFreeHost(void *p) { NEED_CONTEXT free(p); live_allocs--; return 0; }
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  NEED_CONTEXT if (flags != 1) return 1;
  *p = (CUdeviceptr)take(n, 4096); return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  NEED_CONTEXT (void)n; registered = p; register_flags = flags; return 0;
}
CUresult cuMemHostUnregister(void *p) { NEED_CONTEXT if (p != registered) return 713; registered = NULL; return 0; }
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  if (attr == 3) { *(CUdeviceptr *)data = p; return 0; }
  return 1;
}
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
  NEED_CONTEXT memmove((void *)d, (void *)s, n); copies++; return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpy(d, s, n); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return cuMemcpy(d, (CUdeviceptr)s, n); }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return cuMemcpy((CUdeviceptr)d, s, n); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return cuMemcpy(d, s, n); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { (void)st; return cuMemcpy(d, (CUdeviceptr)s, n); }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpy((CUdeviceptr)d, s, n); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpy(d, s, n); }
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) {
  (void)dc; (void)sc; (void)st; return cuMemcpy(d, s, n);
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { NEED_CONTEXT memset((void *)d, v, n); d8++; return 0; }
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) {
  NEED_CONTEXT if (d % 2) return 1;
  for (size_t i = 0; i < n; i++) ((unsigned short *)d)[i] = v;
  d16++; return 0;
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
  NEED_CONTEXT if (d % 4) return 1;
  for (size_t i = 0; i < n; i++) ((unsigned *)d)[i] = v;
  d32++; return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { (void)s; return cuMemsetD8_v2(d, v, n); }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { (void)s; return cuMemsetD16_v2(d, v, n); }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { (void)s; return cuMemsetD32_v2(d, v, n); }

static void jit_log(unsigned n, int *options, void **values, int which, const char *text) {
  for (unsigned i = 0; i < n; i++)
    if (options[i] == which) {
      size_t cap = 0;
      for (unsigned j = 0; j < n; j++)
        if (options[j] == which + 1) cap = (size_t)values[j];
      snprintf((char *)values[i], cap, "%s", text);
    }
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *options, void **values) {
  NEED_CONTEXT
  const char *text = image;
  if (memcmp(text, "\x7f" "ELF", 4) != 0) {
    if (text[strlen(text) - 1] != '\n') return 1; /* read past the text: no NUL */
    if (strstr(text, "syntax error")) {
      jit_log(n, options, values, 5, "ptxas application ptx input, line 3; fatal : mock syntax error");
      return 218;
    }
    jit_log(n, options, values, 3, "mock JIT: 1 kernel compiled");
  }
  *m = malloc(1); live_modules++; return 0;
}
CUresult cuModuleUnload(CUmodule m) { NEED_CONTEXT free(m); live_modules--; return 0; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)m; if (strcmp(name, "scale")) return 500;
  *f = &kernel_scale; return 0;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *size, CUmodule m, const char *name) {
  (void)m; if (strcmp(name, "counter")) return 500;
  *p = (CUdeviceptr)&counter_global; *size = sizeof counter_global; return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) { (void)f; *v = attr == 0 ? 768 : 0; return 0; }
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
  (void)f; if (attr != 8 || v > 166912) return 1;
  dyn_allowed = v; return 0;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size) {
  static const size_t layout[3][2] = {{0, 8}, {8, 4}, {16, 8}}; /* (float *x, float a, size_t n) */
  (void)f; if (i >= 3) return 1;
  *offset = layout[i][0]; if (size) *size = layout[i][1]; return 0;
}
static CUresult record(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void **params, void **extra) {
  NEED_CONTEXT
  last_grid[0] = gx; last_grid[1] = gy; last_grid[2] = gz;
  last_block[0] = bx; last_block[1] = by; last_block[2] = bz;
  last_shared = shared; last_args_size = 0;
  if (shared > 49152 && shared > dyn_allowed) return 1;
  if (params) bad_extra++;
  if (extra) {
    if (extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0) { bad_extra++; return 1; }
    last_args_size = *(size_t *)extra[3];
    memcpy(last_args, extra[1], last_args_size < sizeof last_args ? last_args_size : sizeof last_args);
  }
  return 0;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream s, void **params, void **extra) {
  (void)f; (void)s; last_cooperative = 0;
  return record(gx, gy, gz, bx, by, bz, shared, params, extra);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shared, CUstream s, void **params) {
  (void)f; (void)s; last_cooperative = 2;
  return record(gx, gy, gz, bx, by, bz, shared, params, NULL);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  (void)f;
  last_cooperative = c->numAttrs == 1 && c->attrs[0].id == 2 && c->attrs[0].value.cooperative == 1;
  return record(c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                c->sharedMemBytes, params, extra);
}
CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, size_t (*b2d_fn)(int),
                                          size_t dyn, int limit) {
  (void)f; (void)dyn; (void)limit;
  *block = 256; *min_grid = 216; b2d = b2d_fn ? (long long)b2d_fn(256) : -1; return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t dyn) {
  (void)f; (void)dyn; *n = 2048 / block; return 0;
}
CUresult cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; *s = malloc(1); return 0; }
CUresult cuStreamDestroy_v2(CUstream s) { free(s); return 0; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return 0; }
CUresult cuStreamQuery(CUstream s) { (void)s; return 0; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *data) { (void)s; fn(data); return 0; }
CUresult cuEventCreate(CUevent *e, unsigned flags) { (void)flags; *e = malloc(1); return 0; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return 0; }
CUresult cuEventQuery(CUevent e) { (void)e; return 600; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)a; (void)b; *ms = 1.5f; return 0; }
CUresult cuEventDestroy_v2(CUevent e) { free(e); return 0; }
"#;

/// Builds the mock driver into a temporary folder; `None` without a C compiler (a
/// compiler that fails on it fails the test).
/// Builds the mock as `<tag>/libcuda.so.1`: each test gets its own file, so its own
/// loaded copy with its own counters (tests run in parallel threads of one process).
fn build_mock_driver(tag: &str) -> Option<std::path::PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("liboffload-mock-cuda-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("mock_libcuda.c");
    std::fs::write(&source, MOCK_DRIVER).unwrap();
    let library = dir.join("libcuda.so.1");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&compiler)
        .args(["-shared", "-fPIC", "-O1", "-std=gnu11", "-Wall", "-o"])
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

struct Mock {
    library: libloading::Library,
}

impl Mock {
    fn get(&self, key: &str) -> i64 {
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

    fn last_args(&self) -> Vec<u8> {
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

#[test]
fn the_device_path_runs_against_a_mock_driver() {
    use offload::plugin::foundation::error::ErrorCode;
    use offload::plugin::{
        AllocKind, Device, DeviceInfo, InfoValue, KernelArgs, LaunchConfig, Plugin, SymbolKind,
    };

    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(path) = build_mock_driver("device") else {
        eprintln!("skipped: no C compiler to build the mock driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: the mock has no initialisers; the plugin opened the same file, so this is
    // the same loaded copy with the same state.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    assert_eq!(plugin.version(), "12.8");
    let devices = plugin.open_devices().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(
        mock.get("ctx_refs"),
        1,
        "the primary context is retained once"
    );
    let gpu = &devices[0];

    // Info: the driver's readings, converted.
    let info = |key| gpu.info(key).unwrap();
    assert_eq!(info(DeviceInfo::Name), InfoValue::Str("Mock GPU 0".into()));
    assert_eq!(
        info(DeviceInfo::Uid),
        InfoValue::Str("GPU-00112233-4455-6677-8899-aabbccddeeff".into()),
        "cuDeviceGetUuid_v2 is preferred"
    );
    assert_eq!(
        info(DeviceInfo::DriverVersion),
        InfoValue::Str("12.8".into())
    );
    assert_eq!(info(DeviceInfo::MaxClockFrequency), InfoValue::U32(1410));
    assert_eq!(info(DeviceInfo::MemoryClockRate), InfoValue::U32(1593));
    assert_eq!(info(DeviceInfo::NumComputeUnits), InfoValue::U32(108));
    assert_eq!(info(DeviceInfo::GlobalMemSize), InfoValue::U64(40 << 30));
    assert_eq!(
        info(DeviceInfo::WorkGroupLocalMemSize),
        InfoValue::U64(166912)
    );
    assert_eq!(
        info(DeviceInfo::MaxWorkGroupSizePerDimension),
        InfoValue::Dims([1024, 1024, 64])
    );
    assert_eq!(info(DeviceInfo::NumLanes), InfoValue::U32(32));

    // Memory of each kind, copies both ways, and fills of every planning path.
    for kind in AllocKind::ALL {
        let p = gpu.allocate(4096, kind).unwrap();
        assert_eq!(p % 64, 0);
        gpu.free(p, 4096, kind).unwrap();
    }
    assert_eq!(mock.get("live_allocs"), 0);
    let p = gpu.allocate(1 << 16, AllocKind::Device).unwrap();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    gpu.copy_to_device(p, data.as_ptr() as usize, data.len())
        .unwrap();
    gpu.copy_within_device(p + 2000, p, data.len()).unwrap();
    let mut back = vec![0u8; data.len()];
    gpu.copy_from_device(back.as_mut_ptr() as usize, p + 2000, back.len())
        .unwrap();
    assert_eq!(back, data);
    let read = |at: usize, n: usize| {
        let mut out = vec![0u8; n];
        gpu.copy_from_device(out.as_mut_ptr() as usize, at, n)
            .unwrap();
        out
    };
    let repeated =
        |pattern: &[u8], n: usize| -> Vec<u8> { pattern.iter().copied().cycle().take(n).collect() };
    for (offset, pattern, size) in [
        (0usize, vec![0xABu8], 777usize),
        (2, vec![1, 2], 100),
        (4, vec![1, 2, 3, 4], 4000),
        (1, vec![1, 2, 3, 4], 41),
        (3, vec![9, 8, 7], 10_000),
        (0, vec![0; 8], 64),
        (5, (0..100).collect(), 30_001),
    ] {
        let before = (mock.get("d16"), mock.get("d32"));
        gpu.fill(p + offset, &pattern, size).unwrap();
        assert_eq!(
            read(p + offset, size),
            repeated(&pattern, size),
            "{pattern:?} x {size}"
        );
        if pattern.len() == 4 && offset % 4 == 0 {
            assert_eq!(
                mock.get("d32"),
                before.1 + 1,
                "an aligned 4-byte pattern is one cuMemsetD32"
            );
        }
        if pattern.len() == 2 {
            assert_eq!(mock.get("d16"), before.0 + 1);
        }
    }
    gpu.free(p, 1 << 16, AllocKind::Device).unwrap();

    // Host registration: pinned for every context, mapped, same address.
    let buffer = vec![0u8; 8192];
    let addr = buffer.as_ptr() as usize;
    assert_eq!(gpu.lock_host_memory(addr, buffer.len()).unwrap(), addr);
    assert_eq!(mock.get("register_flags"), 3, "PORTABLE | DEVICEMAP");
    gpu.unlock_host_memory(addr).unwrap();
    assert_eq!(
        gpu.unlock_host_memory(addr).unwrap_err().code,
        ErrorCode::InvalidArgument,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"
    );

    // Images: the device is sm_80.
    let ptx = b".version 7.0\n.target sm_80\n.address_size 64\n\
                .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n";
    gpu.check_image(ptx).unwrap();
    let newer = String::from_utf8_lossy(ptx).replace("sm_80", "sm_90");
    let e = gpu.check_image(newer.as_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details.contains("CUDA device 0 (Mock GPU 0)"),
        "{}",
        e.details
    );

    let bad = String::from_utf8_lossy(ptx).replace("ret;", "syntax error");
    let Err(e) = gpu.load_program(bad.as_bytes()) else {
        panic!("bad PTX loaded");
    };
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details
            .contains("CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"),
        "{}",
        e.details
    );
    assert!(
        e.details
            .contains("JIT log: ptxas application ptx input, line 3; fatal : mock syntax error"),
        "{}",
        e.details
    );

    let cubin = offload::image::minimal_cubin(80, &["scale"]);
    drop(gpu.load_program(&cubin).unwrap());
    assert_eq!(
        mock.get("live_modules"),
        0,
        "a dropped program unloads its module"
    );

    // PTX without its NUL is terminated before the driver reads it.
    let program = gpu.load_program(ptx).unwrap();
    assert_eq!(program.symbol_kind("scale"), Some(SymbolKind::Kernel));
    assert_eq!(
        program.symbol_kind("counter"),
        Some(SymbolKind::GlobalVariable)
    );
    assert_eq!(program.symbol_kind("absent"), None);
    assert_eq!(
        program.kernel("counter").err().unwrap().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.global("scale").unwrap_err().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.kernel("absent").err().unwrap().code,
        ErrorCode::NotFound
    );
    let counter = program.global("counter").unwrap();
    assert_eq!(counter.size, 4);
    let mut value = [0u8; 4];
    gpu.copy_from_device(value.as_mut_ptr() as usize, counter.address, 4)
        .unwrap();
    assert_eq!(i32::from_ne_bytes(value), 41);

    // Launches: the argument block arrives whole, through `extra`.
    let kernel = program.kernel("scale").unwrap();
    let x = 0x1234_5678_9abc_def0u64.to_ne_bytes();
    let a = 2.5f32.to_ne_bytes();
    let n = 1000u64.to_ne_bytes();
    let args = KernelArgs::from_values([(&x[..], 8), (&a[..], 4), (&n[..], 8)]);
    assert_eq!(args.len(), 24);
    assert_eq!(
        kernel
            .check_args(&KernelArgs::from_bytes(&args.bytes[..16]))
            .unwrap_err()
            .code,
        ErrorCode::InvalidArgument,
        "shorter than the parameters cuFuncGetParamInfo reports"
    );
    kernel.check_args(&args).unwrap();
    let mut config = LaunchConfig {
        dimensions: 2,
        num_groups: [4, 3, 9],
        group_size: [128, 2, 9],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    kernel.launch(&config, &args).unwrap();
    assert_eq!(mock.get("grid"), 4 * 10000 + 3 * 100 + 1, "x, y, then 1");
    assert_eq!(mock.get("block"), 128 * 10000 + 2 * 100 + 1);
    assert_eq!(mock.last_args(), args.bytes);
    assert_eq!(mock.get("last_cooperative"), 0);
    assert_eq!(mock.get("bad_extra"), 0);

    config.group_size = [1024, 1, 1];
    let e = kernel.launch(&config, &args).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.details.contains("at most 768"), "{}", e.details);
    config.group_size = [128, 2, 9];

    config.dyn_shared_memory = 64 << 10;
    kernel.launch(&config, &args).unwrap();
    assert_eq!(
        mock.get("dyn_allowed"),
        64 << 10,
        "raised past the 48 KiB default first"
    );
    assert_eq!(mock.get("last_shared"), 64 << 10);
    config.dyn_shared_memory = 1 << 20;
    assert!(
        kernel.launch(&config, &args).is_err(),
        "more than the device allows"
    );

    config.dyn_shared_memory = 0;
    config.cooperative = true;
    kernel.launch(&config, &args).unwrap();
    assert_eq!(
        mock.get("last_cooperative"),
        1,
        "cuLaunchKernelEx with the attribute"
    );
    assert_eq!(mock.last_args(), args.bytes);
    assert_eq!(
        kernel.max_cooperative_groups(&config).unwrap(),
        (2048 / 256) * 108
    );

    assert_eq!(kernel.optimal_group_size(0).unwrap(), 256);
    assert_eq!(
        mock.get("b2d"),
        -1,
        "no callback without per-item shared memory"
    );
    assert_eq!(kernel.optimal_group_size(4).unwrap(), 256);
    assert_eq!(mock.get("b2d"), 1024, "4 bytes for each of 256 threads");

    // The context was made current once on this thread, not per call.
    assert_eq!(mock.get("ctx_sets"), 1);

    // Streams and events through the wrappers.
    let driver = gpu.driver();
    let stream = driver
        .stream_create(offload::plugins::cuda::ffi::STREAM_NON_BLOCKING)
        .unwrap();
    let event = driver.event_create(0).unwrap();
    driver.event_record(event, stream).unwrap();
    assert!(
        !driver.event_query(event).unwrap(),
        "CUDA_ERROR_NOT_READY is 'not yet'"
    );
    assert_eq!(driver.event_elapsed_ms(event, event).unwrap(), 1.5);
    driver.event_destroy(event).unwrap();
    driver.stream_destroy(stream).unwrap();

    drop(kernel);
    drop(program);
    assert_eq!(mock.get("live_modules"), 0);
    drop(devices);
    assert_eq!(mock.get("ctx_refs"), 0, "the primary context is released");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn streams_and_events_run_against_a_mock_driver() {
    use offload::plugin::foundation::error::{Error, ErrorCode};
    use offload::plugin::{
        AllocKind, CopyDirection, Device, KernelArgs, LaunchConfig, Plugin, StreamEvent, StreamOp,
    };
    use std::sync::Arc;

    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(path) = build_mock_driver("streams") else {
        eprintln!("skipped: no C compiler to build the mock driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: as in the test above: the same loaded copy of the mock.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    let gpu = plugin.open_devices().unwrap().remove(0);
    let stream = gpu.create_stream().unwrap();

    // A copy in, a fill of a 3-byte pattern (no native memset), a copy out.
    let p = gpu.allocate(4096, AllocKind::Device).unwrap();
    let input: Vec<u8> = (0..=255).cycle().take(4096).collect();
    let mut output = vec![0u8; 4096];
    let copy = |dst: usize, src: usize, direction| StreamOp::Copy {
        dst,
        src,
        size: 4096,
        direction,
    };
    stream
        .enqueue(
            "olMemcpy",
            copy(p, input.as_ptr() as usize, CopyDirection::HostToDevice),
            None,
        )
        .unwrap();
    stream
        .enqueue(
            "olMemFill",
            StreamOp::Fill {
                dst: p + 100,
                pattern: vec![7, 8, 9],
                size: 300,
            },
            None,
        )
        .unwrap();
    stream
        .enqueue(
            "olMemcpy",
            copy(output.as_mut_ptr() as usize, p, CopyDirection::DeviceToHost),
            None,
        )
        .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(&output[..100], &input[..100]);
    assert!(output[100..400].chunks(3).all(|c| c == [7, 8, 9]));
    assert_eq!(&output[400..], &input[400..]);

    // A launch passes the argument block through the stream's launch.
    let ptx = b".version 7.0\n.target sm_80\n.address_size 64\n\
                .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n";
    let program = gpu.load_program(ptx).unwrap();
    let x = 7u64.to_ne_bytes();
    let a = 0.5f32.to_ne_bytes();
    let n = 3u64.to_ne_bytes();
    let args = KernelArgs::from_values([(&x[..], 8), (&a[..], 4), (&n[..], 8)]);
    let config = LaunchConfig {
        dimensions: 1,
        num_groups: [2, 1, 1],
        group_size: [64, 1, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    stream
        .enqueue(
            "olLaunchKernel",
            StreamOp::Launch {
                kernel: program.kernel("scale").unwrap(),
                config,
                args: args.clone(),
            },
            None,
        )
        .unwrap();
    assert_eq!(mock.last_args(), args.bytes);

    // Events: timed by the driver; a stream waits on them; a host event is refused.
    let start = stream.record().unwrap();
    let end = stream.record().unwrap();
    assert_eq!(start.elapsed_ms(end.as_ref()).unwrap(), 1.5);
    stream.wait(&end).unwrap();
    let host_event = Plugin::devices(&offload::plugins::host::HostPlugin)
        .remove(0)
        .create_stream()
        .unwrap()
        .record()
        .unwrap();
    assert_eq!(
        stream.wait(&host_event).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
    let _: &Arc<dyn StreamEvent> = &start;

    // A host step's error (and a guard's) is reported, the stream stays usable.
    stream
        .enqueue(
            "olLaunchHostFunction",
            StreamOp::Host(Box::new(|| Err(Error::unknown("callback failed")))),
            None,
        )
        .unwrap();
    let e = stream.synchronize().unwrap_err();
    assert!(e.details.contains("olLaunchHostFunction") && e.details.contains("callback failed"));
    stream.synchronize().unwrap();
    let refused = stream.enqueue(
        "olMemcpy",
        copy(output.as_mut_ptr() as usize, p, CopyDirection::DeviceToHost),
        Some(Box::new(|| Err(Error::invalid_argument("freed meanwhile")))),
    );
    assert!(refused.unwrap_err().details.contains("freed meanwhile"));
    assert!(stream.is_idle());
    drop(stream);
    gpu.free(p, 4096, AllocKind::Device).unwrap();
    drop(program);
    drop(gpu);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
