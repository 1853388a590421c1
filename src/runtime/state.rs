//! The library's global state: the `olInit` reference count and the live runtime.

use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::Backend;
use crate::runtime::context::Runtime;
use crate::runtime::thread_copy::{with_thread_copy, ThreadCopy};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Serialises `init` and `shut_down` and holds the reference count.
static INIT_COUNT: Mutex<usize> = Mutex::new(0);
/// The live runtime.
static CURRENT: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);
/// Bumped whenever `CURRENT` changes, so per-thread copies know they are out of date.
static GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's copy of `CURRENT` and the generation it was taken at.
    static CACHED: ThreadCopy<Option<Arc<Runtime>>> = const { RefCell::new((0, None)) };
}

/// Which backends `olInit` should bring up.
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// Empty means every backend. The host platform is always present.
    pub backends: Vec<Backend>,
}

/// Increments the reference count; the first call builds the runtime.
pub fn init(options: &InitOptions) -> Result<()> {
    let mut count = INIT_COUNT.lock();
    if *count == 0 {
        let runtime = Runtime::new(options)?;
        *CURRENT.write() = Some(Arc::new(runtime));
        GENERATION.fetch_add(1, Ordering::Release);
    }
    *count += 1;
    Ok(())
}

/// Decrements the reference count; at zero, finishes outstanding work and releases
/// everything.
pub fn shut_down() -> Result<()> {
    let mut count = INIT_COUNT.lock();
    if *count == 0 {
        return Err(not_initialised());
    }
    *count -= 1;
    if *count == 0 {
        let runtime = CURRENT.write().take();
        GENERATION.fetch_add(1, Ordering::Release);
        if let Some(runtime) = runtime {
            runtime.shut_down();
        }
    }
    Ok(())
}

/// Runs `f` with the live runtime, or answers `Uninitialized`. The hot path reads this
/// thread's copy and one shared counter, and writes nothing shared.
pub fn with_current<R>(f: impl FnOnce(&Arc<Runtime>) -> Result<R>) -> Result<R> {
    with_thread_copy(
        &CACHED,
        &GENERATION,
        f,
        |copy| *copy = CURRENT.read().clone(),
        |copy, f| f(copy.as_ref().ok_or_else(not_initialised)?),
        |f| {
            f(CURRENT
                .read()
                .clone()
                .as_ref()
                .ok_or_else(not_initialised)?)
        },
    )
}

/// The live runtime, or `Uninitialized`.
pub fn current() -> Result<Arc<Runtime>> {
    CURRENT.read().clone().ok_or_else(not_initialised)
}

fn not_initialised() -> Error {
    Error::uninitialized("the library is not initialised: call olInit first (every olInit must be matched by one olShutDown)")
}
