//! The application's heartbeat: every `HEARTBEAT` an empty message to each server, busy
//! or idle. A server on another host cannot watch the application's process; hearing
//! nothing for `settings::orphan_timeout()` (no request, no beat) tells it that the
//! application is gone or cut off from it, and it ends rather than keep the job alive.
//! A beat that cannot go (the server is stopped, gone or cut off) is given up, and that
//! server's next one waits twice as long, up to `MAX_BACKOFF`: MPI keeps what was given
//! up, so beats to a server that never answers again must not pile up. The beats stop
//! before MPI is finalised.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::abi::HEARTBEAT;

/// The longest wait between beats to a server whose beats do not go.
const MAX_BACKOFF: Duration = Duration::from_secs(32);

/// Whether beats may still go; held while one goes, so that `stop` returns only when
/// none is under way.
#[derive(Default)]
pub struct Beat {
    stopped: Mutex<bool>,
}

impl Beat {
    /// No beat goes after this returns.
    pub fn stop(&self) {
        *self.stopped.lock() = true;
    }
}

/// When a server's next beat goes.
struct Schedule {
    rank: i32,
    next: Instant,
    gap: Duration,
}

impl Schedule {
    /// After a beat: the next one in `HEARTBEAT`, or, when it did not go, twice the last
    /// gap.
    fn went(&mut self, ok: bool, now: Instant) {
        self.gap = if ok {
            HEARTBEAT
        } else {
            (self.gap * 2).min(MAX_BACKOFF)
        };
        self.next = now + self.gap;
    }
}

/// Beats once to each of `ranks` (`send(rank)`: whether the beat went), then starts the
/// thread that beats on until `beat` is stopped. The first beats go before this returns,
/// so before any request of the application: a server takes this application's later
/// silence for its end only once it has heard a beat, and a link that fails soon after
/// the start must not leave its server waiting for ever. Without a thread there are no
/// more beats: servers on other hosts then end only at the application's exit request,
/// which is said where tracing is on.
pub fn start(beat: Arc<Beat>, ranks: Vec<i32>, send: impl Fn(i32) -> bool + Send + 'static) {
    let start = Instant::now();
    let mut schedule: Vec<Schedule> = ranks
        .into_iter()
        .map(|rank| Schedule {
            rank,
            next: start,
            gap: HEARTBEAT,
        })
        .collect();
    // Every server is due at the start.
    beat_due(&mut schedule, &send, start);
    let spawned = std::thread::Builder::new()
        .name("offload-mpi-beat".into())
        .spawn(move || loop {
            std::thread::sleep(HEARTBEAT);
            let stopped = beat.stopped.lock();
            if *stopped {
                return;
            }
            beat_due(&mut schedule, &send, Instant::now());
        });
    if let Err(e) = spawned {
        crate::plugin::foundation::flags::trace(|| format!("MPI: no heartbeat thread: {e}"));
    }
}

/// Beats to each server of `schedule` whose next beat is due at `now`.
fn beat_due(schedule: &mut [Schedule], send: &impl Fn(i32) -> bool, now: Instant) {
    for s in schedule.iter_mut().filter(|s| s.next <= now) {
        let ok = send(s.rank);
        s.went(ok, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn beats_go_until_stopped_and_never_after() {
        let beat = Arc::new(Beat::default());
        let sent = Arc::new(AtomicUsize::new(0));
        let counter = sent.clone();
        start(beat.clone(), vec![0, 1], move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            true
        });
        let until = Instant::now() + Duration::from_secs(10);
        while sent.load(Ordering::SeqCst) < 4 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(sent.load(Ordering::SeqCst) >= 4, "beats went to both");
        beat.stop();
        let after_stop = sent.load(Ordering::SeqCst);
        std::thread::sleep(HEARTBEAT * 3);
        assert_eq!(
            sent.load(Ordering::SeqCst),
            after_stop,
            "no beat after stop"
        );
    }

    #[test]
    fn the_first_beats_go_before_start_returns() {
        let beat = Arc::new(Beat::default());
        let sent = Arc::new(Mutex::new(Vec::new()));
        let record = sent.clone();
        start(beat.clone(), vec![0, 1, 2], move |rank| {
            record.lock().push(rank);
            rank != 1
        });
        // (The thread's own beats come HEARTBEAT later, after these.)
        let first: Vec<i32> = sent.lock().iter().take(3).copied().collect();
        beat.stop();
        assert_eq!(first, vec![0, 1, 2], "one beat to each server, at once");
    }

    #[test]
    fn a_server_whose_beats_do_not_go_is_beaten_less_and_less_often() {
        let t0 = Instant::now();
        let mut s = Schedule {
            rank: 0,
            next: t0,
            gap: HEARTBEAT,
        };
        let mut gaps = Vec::new();
        for _ in 0..10 {
            s.went(false, t0);
            gaps.push(s.gap);
        }
        assert_eq!(gaps[0], HEARTBEAT * 2);
        assert_eq!(gaps[1], HEARTBEAT * 4);
        assert_eq!(*gaps.last().unwrap(), MAX_BACKOFF);
        s.went(true, t0);
        assert_eq!(
            (s.gap, s.next),
            (HEARTBEAT, t0 + HEARTBEAT),
            "back to every beat"
        );
    }
}
