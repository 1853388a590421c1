//! A server whose application runs on another host cannot watch its process
//! (`app_watch`); it learns that the application is gone, or cut off from it, from its
//! silence instead. The application beats every `HEARTBEAT`, busy or idle
//! (`src/plugins/remote/beat.rs`), so once one beat has come, hearing nothing (no request,
//! no beat) for `settings::orphan_timeout()` means there is no application any more, and
//! the server ends rather than keep the MPI job alive for ever. Before a first beat (an
//! application that does not beat) silence ends nothing.

use std::time::Duration;

pub struct Orphan {
    /// `None`: never (`OFFLOAD_MPI_ORPHAN_TIMEOUT=0`).
    limit: Option<Duration>,
}

impl Orphan {
    pub fn new(limit: Option<Duration>) -> Self {
        Orphan { limit }
    }

    /// At each of the server's own beats, while the application is not watched on this
    /// host: `has_beaten`, whether any of its heartbeats was ever taken (by any thread:
    /// the server's waits take them too); `silence`, how long it has said nothing. Why
    /// the server ends, when it does.
    pub fn check(&self, has_beaten: bool, silence: Duration) -> Option<String> {
        let limit = self.limit?;
        (has_beaten && silence >= limit).then(|| {
            format!(
                "the application has not been heard from for {:.1} s (it beats every 0.5 s): it ended or is cut off from this server; ending (OFFLOAD_MPI_ORPHAN_TIMEOUT={:.0})",
                silence.as_secs_f64(),
                limit.as_secs_f64()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn silence_ends_a_server_only_after_a_beat_and_past_the_limit() {
        let o = Orphan::new(Some(10 * S));
        assert_eq!(
            o.check(false, 100 * S),
            None,
            "no beat yet: an application without beats"
        );
        assert_eq!(o.check(true, Duration::ZERO), None);
        assert_eq!(o.check(true, 9 * S), None, "within the limit");
        let why = o.check(true, 10 * S).expect("past the limit");
        assert!(
            why.contains("10.0 s") && why.contains("OFFLOAD_MPI_ORPHAN_TIMEOUT=10"),
            "{why}"
        );
    }

    #[test]
    fn no_limit_never_ends_a_server() {
        let o = Orphan::new(None);
        assert_eq!(o.check(true, Duration::ZERO), None);
        assert_eq!(o.check(true, 100_000 * S), None);
    }
}
