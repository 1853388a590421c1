//! The panic boundary of every function this library exports: a panic inside one (a
//! bug of ours) ends the program as LLVM's libomptarget ends it on a fatal error, with
//! its message and status, instead of unwinding into the C caller (undefined behaviour
//! before Rust 1.81, an abort without a word since).

use crate::policy;
use offload::plugin::foundation::worker_pool::panic_text;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`, the work of the exported function `name`; a panic in it is a fatal
/// error naming the function.
#[inline]
pub fn boundary<R>(name: &str, body: impl FnOnce() -> R) -> R {
    let guarded = AssertUnwindSafe(|| {
        #[cfg(test)]
        tests::maybe_panic();
        body()
    });
    match catch_unwind(guarded) {
        Ok(result) => result,
        Err(panic) => policy::fatal(
            1,
            &format!("{name}: internal error: {}", panic_text(&panic)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Set in the child process of the test below: the next boundary panics.
    static INJECT: AtomicBool = AtomicBool::new(false);

    pub(super) fn maybe_panic() {
        if INJECT.load(Ordering::Relaxed) {
            panic!("injected panic");
        }
    }

    const CHILD: &str = "OMPTARGET_BOUNDARY_TEST_CHILD";

    #[test]
    fn a_panic_in_an_exported_function_is_llvms_fatal_error() {
        if std::env::var_os(CHILD).is_some() {
            let host = crate::device_api::omp_get_initial_device();
            INJECT.store(true, Ordering::Relaxed);
            let mut n = 0u8;
            // SAFETY: a valid byte of host memory.
            unsafe { crate::memset::omp_target_memset((&mut n as *mut u8).cast(), 1, 1, host) };
            unreachable!("the boundary aborts");
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "boundary::tests::a_panic_in_an_exported_function_is_llvms_fatal_error",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
        assert!(
            stderr.contains(
                "omptarget fatal error 1: omp_target_memset: internal error: injected panic"
            ),
            "{stderr}"
        );
    }

    /// Every function this crate exports runs its body inside `boundary`.
    #[test]
    fn every_exported_function_has_the_boundary() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if line.trim() != "#[no_mangle]" {
                    continue;
                }
                // The first line of the body follows the signature's `{`.
                let body = lines[i..]
                    .iter()
                    .position(|l| l.trim_end().ends_with('{'))
                    .and_then(|at| lines.get(i + at + 1));
                if !body.is_some_and(|l| l.trim_start().starts_with("boundary(")) {
                    missing.push(format!("{}:{}", path.display(), i + 1));
                }
            }
        }
        assert!(missing.is_empty(), "no boundary: {missing:?}");
    }
}
