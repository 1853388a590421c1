//! The library's global state: the `olInit` reference count and the live runtime.

use crate::plugin::Backend;
use crate::runtime::context::Runtime;
use crate::runtime::error::{Error, Result};
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

/// Serialises `init` and `shut_down` and holds the reference count.
static INIT_COUNT: Mutex<usize> = Mutex::new(0);
/// The live runtime, read by every call.
static CURRENT: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);

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
        if let Some(runtime) = runtime {
            runtime.shut_down();
        }
    }
    Ok(())
}

/// The live runtime, or `Uninitialized`.
pub fn current() -> Result<Arc<Runtime>> {
    CURRENT.read().clone().ok_or_else(not_initialised)
}

fn not_initialised() -> Error {
    Error::uninitialized("the library is not initialised: call olInit first (every olInit must be matched by one olShutDown)")
}
