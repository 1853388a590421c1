//! Settings read once from the environment.

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

/// `OFFLOAD_PLATFORMS=host,cuda`: the backends `olInit` brings up (read at each `olInit`,
/// since a program may change it between a shutdown and the next init). Unset or empty:
/// every backend. A name that is no backend is an error that names it.
pub fn platforms_from_env() -> crate::runtime::error::Result<Vec<crate::plugin::Backend>> {
    use crate::plugin::Backend;
    let Ok(list) = std::env::var("OFFLOAD_PLATFORMS") else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            Ok(match name.to_ascii_lowercase().as_str() {
                "host" => Backend::Host,
                "cuda" => Backend::Cuda,
                "amdgpu" => Backend::Amdgpu,
                "level_zero" | "levelzero" => Backend::LevelZero,
                "mpi" | "remote" => Backend::Mpi,
                _ => {
                    return Err(crate::runtime::error::Error::invalid_value(format!(
                        "OFFLOAD_PLATFORMS names '{name}'; expected a comma-separated list of host, cuda, amdgpu, level_zero, mpi"
                    )))
                }
            })
        })
        .collect()
}
