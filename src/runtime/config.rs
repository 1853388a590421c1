//! Runtime settings read from the environment.

/// `OFFLOAD_PLATFORMS=host,cuda`: the backends `olInit` brings up (read at each `olInit`,
/// since a program may change it between a shutdown and the next init). Unset or empty:
/// every backend. A name that is no backend is an error that names it.
pub fn platforms_from_env() -> crate::plugin::foundation::error::Result<Vec<crate::plugin::Backend>>
{
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
                    return Err(crate::plugin::foundation::error::Error::invalid_value(format!(
                        "OFFLOAD_PLATFORMS names '{name}'; expected a comma-separated list of host, cuda, amdgpu, level_zero, mpi"
                    )))
                }
            })
        })
        .collect()
}
