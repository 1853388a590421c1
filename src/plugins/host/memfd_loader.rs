//! Loads a shared object from memory: the bytes go into an anonymous memory file
//! (`memfd_create`), which the dynamic loader opens through `/proc/self/fd/N`. Nothing is
//! written to any file system, and each load is a distinct file, so two programs with the
//! same symbol names (or the same bytes) coexist; `RTLD_LOCAL` keeps their symbols apart.
//!
//! The memory file stays open while the library is loaded. The loader recognises an
//! already-loaded library by the path it was opened with, and `/proc/self/fd/N` names
//! whichever file holds descriptor N *now*; keeping N open until `dlclose` means no two
//! live libraries share a path. If `dlclose` leaves the library mapped (a library marked
//! "nodelete", e.g. by C++ unique symbols), the descriptor is kept for the life of the
//! process, so its number is never reused under the stale name.

use crate::plugin::foundation::error::{Error, Result};
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};

/// A shared object loaded by `load`; unloaded when dropped.
pub struct LoadedLibrary {
    handle: *mut c_void,
    fd: c_int,
    path: String,
}

// SAFETY: a dlopen handle may be used from any thread (dlsym and dlclose are thread-safe
// in glibc and musl), and the descriptor is only closed by `drop`, which has `&mut self`.
unsafe impl Send for LoadedLibrary {}
// SAFETY: the only shared-reference operation is `dlsym`, which is thread-safe.
unsafe impl Sync for LoadedLibrary {}

/// The last `dlerror` message of this thread.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by the loader, valid
    // until the next dl* call on this thread; it is copied at once.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        String::from("no reason given")
    } else {
        // SAFETY: non-NULL, NUL-terminated (see above).
        unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    }
}

impl LoadedLibrary {
    /// Loads `image` (a shared object for this machine) with `RTLD_NOW | RTLD_LOCAL`.
    /// `label` names the memory file (seen in /proc/self/maps as `/memfd:<label>`).
    pub fn load(image: &[u8], label: &str) -> Result<LoadedLibrary> {
        let name = CString::new(label.replace('\0', "_")).expect("NULs were replaced");
        // SAFETY: `name` is a valid C string; MFD_CLOEXEC keeps the descriptor out of
        // child processes.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::new(
                crate::plugin::foundation::error::ErrorCode::HostIo,
                format!("memfd_create failed: {}", std::io::Error::last_os_error()),
            ));
        }
        let close_fd = |fd: c_int| {
            // SAFETY: `fd` is the descriptor opened above and not yet closed.
            unsafe { libc::close(fd) };
        };
        if let Err(e) = write_all(fd, image) {
            close_fd(fd);
            return Err(Error::new(
                crate::plugin::foundation::error::ErrorCode::HostIo,
                format!("writing the image to a memory file failed: {e}"),
            ));
        }
        let path = format!("/proc/self/fd/{fd}");
        let c_path = CString::new(path.clone()).expect("no NUL in a formatted path");
        // SAFETY: `c_path` is a valid C string. Loading runs the image's initialisers; the
        // image was checked to be a shared object for this machine, and running its code is
        // what loading a program means.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            let why = dl_error();
            close_fd(fd);
            return Err(Error::invalid_binary(format!(
                "the dynamic loader refused the image: {why}"
            )));
        }
        Ok(LoadedLibrary { handle, fd, path })
    }

    /// The path the dynamic loader opened (always under `/proc/self/fd/`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The address of the named symbol, as the loader resolved it.
    pub fn symbol(&self, name: &str) -> Option<usize> {
        let c_name = CString::new(name).ok()?;
        // SAFETY: `handle` is a live dlopen handle (closed only in drop) and `c_name` a
        // valid C string. The address is returned as a number, not dereferenced.
        let addr = unsafe { libc::dlsym(self.handle, c_name.as_ptr()) };
        (!addr.is_null()).then_some(addr as usize)
    }
}

fn write_all(fd: c_int, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live slice; write reads at most `bytes.len()` bytes of it.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

impl Drop for LoadedLibrary {
    fn drop(&mut self) {
        // SAFETY: `handle` came from dlopen and is closed exactly once, here; every kernel
        // holds the library alive while it runs, so no code of it is running.
        unsafe { libc::dlclose(self.handle) };
        let c_path = CString::new(self.path.clone()).expect("no NUL in a formatted path");
        // SAFETY: RTLD_NOLOAD only looks the path up among loaded libraries.
        let still = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if still.is_null() {
            // SAFETY: the descriptor was opened by `load` and is closed exactly once.
            unsafe { libc::close(self.fd) };
        } else {
            // The library stays mapped: drop the reference RTLD_NOLOAD took and keep the
            // descriptor, so that its number (and so this path) is never reused.
            // SAFETY: `still` is a handle dlopen just returned.
            unsafe { libc::dlclose(still) };
        }
    }
}
