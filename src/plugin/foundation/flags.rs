//! Switches read once from the environment: the trace and validation.

use std::sync::LazyLock;

fn flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref().map(str::trim),
        Ok("1") | Ok("true") | Ok("TRUE") | Ok("on") | Ok("ON") | Ok("yes")
    )
}

static TRACE: LazyLock<bool> = LazyLock::new(|| flag("OFFLOAD_TRACE"));
static VALIDATION: LazyLock<bool> = LazyLock::new(|| !flag("OFFLOAD_DISABLE_VALIDATION"));

/// `OFFLOAD_TRACE=1`: print every call, its arguments and its result to stderr.
pub fn trace_enabled() -> bool {
    *TRACE
}

/// Validation is on unless `OFFLOAD_DISABLE_VALIDATION=1`.
pub fn validation_enabled() -> bool {
    *VALIDATION
}

/// Prints a line of the trace (a backend saying why it found no device, say).
pub fn trace(message: impl FnOnce() -> String) {
    if trace_enabled() {
        eprintln!("offload: {}", message());
    }
}
