//! `omp_target_memset[_async]`: fills device memory with one byte value. Device memory
//! is filled by liboffload (`olMemFill`); host memory of the initial device by `memset`.
//! A device address liboffload did not allocate (an image's global, say) is filled the
//! way LLVM 19 fills every device address: a filled host buffer copied over; so is every
//! address while an OMPT tool listens, which then sees LLVM's transfer.

use crate::abi::deps::{self, DependInfo};
use crate::devices::registry::{self, resolve, Target};
use crate::ompt::connect::callbacks;
use crate::ompt::events;
use crate::plugin::ol;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::{c_int, c_void};

fn fill_device(device: usize, ptr: usize, byte: u8, size: usize) -> Result<(), String> {
    // An OMPT tool is shown what LLVM shows it: a copy of a filled host buffer.
    if ol::is_allocation(ptr) && callbacks().is_none() {
        return ol::fill(ptr, byte, size);
    }
    let devs = registry::state()
        .copy_devices(device)
        .ok_or("liboffload has no host device to copy from")?;
    let filled = vec![byte; size];
    let source = filled.as_ptr() as usize;
    events::routine(|| {
        events::transfer(true, device, source, ptr, size, || {
            ol::memcpy(ptr, devs.device, source, devs.host, size)
        })
    })
}

/// Sets `num_bytes` bytes at `ptr` (memory of `device_num`) to `byte_val`; returns `ptr`.
/// NULL or zero bytes: nothing to do (OpenMP leaves it unspecified; LLVM does nothing).
///
/// # Safety
/// `ptr` is memory of `device_num` with `num_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn omp_target_memset(
    ptr: *mut c_void,
    byte_val: c_int,
    num_bytes: usize,
    device_num: c_int,
) -> *mut c_void {
    boundary("omp_target_memset", || {
        if ptr.is_null() || num_bytes == 0 {
            return ptr;
        }
        // As C's memset: the value is converted to unsigned char.
        let byte = byte_val as u8;
        let filled = match resolve(i64::from(device_num)) {
            Some(Target::Host) => {
                // SAFETY: host memory of `num_bytes` bytes (the caller's promise).
                unsafe { libc::memset(ptr, c_int::from(byte), num_bytes) };
                Ok(())
            }
            Some(Target::Device(device)) => fill_device(device, ptr as usize, byte, num_bytes),
            None => Err(format!("device {device_num} is not a valid device")),
        };
        if let Err(e) = filled {
            message(&format!("error: omp_target_memset: {e}"));
        }
        ptr
    })
}

/// The asynchronous form: waits for the dependences of `depobj_list`, then fills
/// (LLVM runs the fill as a task with those dependences; finishing before returning is
/// one of that task's valid schedules). Returns `ptr`.
///
/// # Safety
/// As `omp_target_memset`; `depobj_list` holds `depobj_count` depend objects.
#[no_mangle]
pub unsafe extern "C" fn omp_target_memset_async(
    ptr: *mut c_void,
    byte_val: c_int,
    num_bytes: usize,
    device_num: c_int,
    depobj_count: c_int,
    depobj_list: *const *const DependInfo,
) -> *mut c_void {
    boundary("omp_target_memset_async", || {
        if ptr.is_null() || num_bytes == 0 {
            return ptr;
        }
        // SAFETY: the caller's promises, passed on.
        unsafe {
            deps::wait_for_objects(depobj_count, depobj_list);
            omp_target_memset(ptr, byte_val, num_bytes, device_num)
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::report::boundary::test_panic;
    use std::os::unix::process::ExitStatusExt;

    const CHILD: &str = "OMPTARGET_BOUNDARY_TEST_CHILD";

    /// A panic inside an exported function (a bug of ours) ends the program as LLVM's
    /// fatal errors do, naming the function.
    #[test]
    fn a_panic_in_an_exported_function_is_llvms_fatal_error() {
        if std::env::var_os(CHILD).is_some() {
            let host = crate::omp_api::device_api::omp_get_initial_device();
            test_panic::inject();
            let mut n = 0u8;
            // SAFETY: a valid byte of host memory.
            unsafe { super::omp_target_memset((&mut n as *mut u8).cast(), 1, 1, host) };
            unreachable!("the boundary aborts");
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "omp_api::memset::tests::a_panic_in_an_exported_function_is_llvms_fatal_error",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
        assert!(
            stderr.contains(
                "omptarget fatal error 1: omp_target_memset: internal error: injected panic"
            ),
            "{stderr}"
        );
    }
}
