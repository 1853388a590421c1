//! A vendor's library opened at run time (the CUDA driver, the HSA runtime, the MPI
//! transport): which file (an override variable, else the default name), its entry
//! points looked up by name, and the reason, as a sentence, when the file or an entry
//! point is missing. The backend then reports zero devices with that reason in the
//! trace (`plugin::opened_devices`); nothing panics. The library is never closed: the
//! entry points taken from it point into it, and vendor runtimes keep threads and
//! callbacks that do not survive an unload.

use libloading::Library;
use std::ffi::OsString;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

/// Where a vendor library is found: the variable that names another file, and the
/// default name (the dynamic loader searches for it).
#[derive(Clone, Copy, Debug)]
pub struct LibraryName {
    pub default: &'static str,
    pub env: &'static str,
}

impl LibraryName {
    /// The file to open given the variable's value: it when set and not empty, else
    /// the default.
    pub fn path_from(&self, env_value: Option<OsString>) -> PathBuf {
        match env_value {
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(self.default),
        }
    }

    /// The file to open in this process.
    pub fn path(&self) -> PathBuf {
        self.path_from(std::env::var_os(self.env))
    }
}

/// An opened vendor library.
pub struct VendorLibrary {
    path: PathBuf,
    library: ManuallyDrop<Library>,
}

impl VendorLibrary {
    /// Opens the file at `path` (or the name the loader searches for).
    ///
    /// # Safety
    /// Opening runs the library's initialisers: `path` must name a library whose
    /// initialisers have no preconditions (the vendor libraries this crate opens).
    pub unsafe fn open(path: &Path) -> Result<VendorLibrary, String> {
        // SAFETY: the caller's promise.
        let library = unsafe { Library::new(path) }
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(VendorLibrary {
            path: path.to_path_buf(),
            library: ManuallyDrop::new(library),
        })
    }

    /// Opens the first of `paths` that opens; the reason names every one tried.
    ///
    /// # Safety
    /// As `open`, for every path.
    pub unsafe fn open_first(paths: &[PathBuf]) -> Result<VendorLibrary, String> {
        let mut tried = Vec::new();
        for path in paths {
            // SAFETY: the caller's promise.
            match unsafe { VendorLibrary::open(path) } {
                Ok(library) => return Ok(library),
                Err(e) => tried.push(e),
            }
        }
        Err(tried.join("; "))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first of `names` the library exports, as a `T`.
    ///
    /// # Safety
    /// `T` is the function pointer type of every symbol in `names`.
    pub unsafe fn find<T: Copy>(&self, names: &[&str]) -> Option<T> {
        names.iter().find_map(|name| {
            // SAFETY: the caller vouches for `T`; the library is never closed, so the
            // pointer stays valid.
            unsafe { self.library.get::<T>(name.as_bytes()) }
                .ok()
                .map(|symbol| *symbol)
        })
    }

    /// As `find`, or the reason: the file does not export any of `names` (`which`
    /// says what library that means it is not).
    ///
    /// # Safety
    /// As `find`.
    pub unsafe fn require<T: Copy>(&self, names: &[&str], which: &str) -> Result<T, String> {
        // SAFETY: the caller's promise.
        unsafe { self.find(names) }.ok_or_else(|| {
            format!(
                "{}: it does not export {} ({which})",
                self.path.display(),
                names.join(" or ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: LibraryName = LibraryName {
        default: "libvendor.so.1",
        env: "OFFLOAD_TEST_VENDOR_LIBRARY",
    };

    #[test]
    fn the_file_is_the_variables_or_the_default() {
        assert_eq!(NAME.path_from(None), PathBuf::from("libvendor.so.1"));
        assert_eq!(
            NAME.path_from(Some(OsString::new())),
            PathBuf::from("libvendor.so.1")
        );
        assert_eq!(
            NAME.path_from(Some("/opt/v/libvendor.so".into())),
            PathBuf::from("/opt/v/libvendor.so")
        );
    }

    #[test]
    fn a_missing_file_or_symbol_is_a_reason_naming_it() {
        // SAFETY: no such file; then libc, whose initialisers ran long ago.
        let missing = unsafe { VendorLibrary::open(Path::new("/nonexistent/libv.so")) };
        let why = missing.err().expect("opened a missing file");
        assert!(why.starts_with("cannot open /nonexistent/libv.so"), "{why}");
        let both = [
            PathBuf::from("/nonexistent/a.so"),
            PathBuf::from("libc.so.6"),
        ];
        // SAFETY: as above.
        let libc = unsafe { VendorLibrary::open_first(&both) }.expect("libc opens");
        assert_eq!(libc.path(), Path::new("libc.so.6"));
        // SAFETY: `getpid` is `pid_t (void)`.
        let getpid: Option<extern "C" fn() -> libc::pid_t> = unsafe { libc.find(&["getpid"]) };
        assert_eq!(getpid.map(|f| f()), Some(std::process::id() as libc::pid_t));
        // SAFETY: never called.
        let absent =
            unsafe { libc.require::<extern "C" fn()>(&["cuInit", "cuInit_v2"], "not a driver") };
        assert_eq!(
            absent.err().as_deref(),
            Some("libc.so.6: it does not export cuInit or cuInit_v2 (not a driver)")
        );
    }
}
