//! The settings of remote devices read from the environment, the same on both sides:
//! the application's backend and the device server (the `remote-mpi` crate) read them
//! here.

use std::time::Duration;

/// How long a server may take to answer (`OFFLOAD_MPI_TIMEOUT`, seconds; default 5).
pub fn timeout() -> Duration {
    seconds_from_env("OFFLOAD_MPI_TIMEOUT", 5.0)
}

/// A positive number of seconds from the variable `name`, else `default`.
pub fn seconds_from_env(name: &str, default: f64) -> Duration {
    let seconds = std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(seconds)
}

/// How long a server on another host than its application waits, hearing nothing from
/// it (no request, no heartbeat), before it takes the application for gone or cut off
/// and ends (`OFFLOAD_MPI_ORPHAN_TIMEOUT`, seconds; default 6 x `OFFLOAD_MPI_TIMEOUT`;
/// `0`: never, for an application stopped in a debugger). A server on the application's
/// own host watches its process instead.
pub fn orphan_timeout() -> Option<Duration> {
    let set = std::env::var("OFFLOAD_MPI_ORPHAN_TIMEOUT").ok();
    if set.and_then(|v| v.trim().parse::<f64>().ok()) == Some(0.0) {
        return None;
    }
    Some(seconds_from_env(
        "OFFLOAD_MPI_ORPHAN_TIMEOUT",
        6.0 * timeout().as_secs_f64(),
    ))
}

/// How long MPI's start may wait for the other ranks of the job
/// (`OFFLOAD_MPI_START_TIMEOUT`, seconds; default 60): the servers wait that long for
/// the application, and the application for the servers.
pub fn start_timeout() -> Duration {
    seconds_from_env("OFFLOAD_MPI_START_TIMEOUT", 60.0)
}
