//! The panic boundary of every function this library exports: a panic inside one (a
//! bug of ours) ends the program as LLVM's libomptarget ends it on a fatal error, with
//! its message and status, instead of unwinding into the C caller (undefined behaviour
//! before Rust 1.81, an abort without a word since).

use crate::report::policy;
use offload::plugin::foundation::worker_pool::panic_text;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`, the work of the exported function `name`; a panic in it is a fatal
/// error naming the function.
#[inline]
pub fn boundary<R>(name: &str, body: impl FnOnce() -> R) -> R {
    let guarded = AssertUnwindSafe(|| {
        #[cfg(test)]
        test_panic::maybe_panic();
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

/// A panic injected into the next boundary, so that a test can see what the program
/// sees (the test runs in a child process: the boundary aborts).
#[cfg(test)]
pub mod test_panic {
    use std::sync::atomic::{AtomicBool, Ordering};

    static INJECT: AtomicBool = AtomicBool::new(false);

    pub fn inject() {
        INJECT.store(true, Ordering::Relaxed);
    }

    pub(super) fn maybe_panic() {
        if INJECT.load(Ordering::Relaxed) {
            panic!("injected panic");
        }
    }
}
