//! How a server starts and ends without waiting for ever: MPI's start waits for every
//! rank of the job, the application's too, so it has a deadline
//! (`OFFLOAD_MPI_START_TIMEOUT`); MPI's end may wait for a rank that is gone or
//! stopped, so it has one too. And the fault tests' hook that makes a server slow.

use offload_remote_mpi::transport::Transport;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// This process's rank as the launcher gave it (before MPI is up).
fn launcher_rank() -> String {
    ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_else(|| "?".into())
}

/// Leaves at once with `code`, after flushing what was printed (no exit handlers: one
/// of them would wait in MPI).
pub fn leave(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: ends the process; nothing runs after it.
    unsafe { libc::_exit(code) }
}

/// Opens MPI, or gives up (leaving the process with status 3) when the other ranks,
/// the application above all, have not started it within the start timeout.
pub fn open(timeout: Duration) -> Result<Transport, String> {
    let limit = offload::plugins::remote::settings::start_timeout();
    let (opened, watchdog) = mpsc::channel::<()>();
    let rank = launcher_rank();
    std::thread::Builder::new()
        .name("offload-mpi-start".into())
        .spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = watchdog.recv_timeout(limit) {
                eprintln!(
                    "offload-mpi-device (rank {rank}): gave up after {:.0} s waiting for the application (the last rank of the job) to start MPI: it never called olInit, runs without the mpi platform (OFFLOAD_PLATFORMS), or ended early (OFFLOAD_MPI_START_TIMEOUT sets the wait)",
                    limit.as_secs_f64()
                );
                leave(3);
            }
        })
        .map_err(|e| format!("no thread to watch MPI's start: {e}"))?;
    let transport = Transport::open(timeout);
    let _ = opened.send(());
    transport
}

/// Finalises MPI; when that does not end within the timeout (a rank is gone or
/// stopped), leaves with `code` without it.
pub fn close(transport: Transport, code: i32) -> i32 {
    let within = transport.timeout();
    if !transport.close(within) {
        eprintln!(
            "offload-mpi-device: MPI_Finalize did not return within {:.1} s (another rank is gone or stopped); leaving without it",
            within.as_secs_f64()
        );
        leave(code);
    }
    code
}

/// Set by SIGUSR1 when the hook is armed: from then on the server is slow.
static SLOW: AtomicBool = AtomicBool::new(false);
/// How long each step of a slow server takes, in milliseconds.
static SLOW_STEP_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn turn_slow(_signal: libc::c_int) {
    SLOW.store(true, Ordering::Release);
}

/// The fault tests' hook: with `OFFLOAD_MPI_TEST_SLOW=seconds` set, SIGUSR1 makes this
/// server slow from then on: every reply, every piece of data and every poll of a wait
/// first sleeps that long, and its heartbeats stop (a slow server looks silent; a busy
/// one says it is alive). Off unless the variable is set.
pub fn arm_slow_hook(transport: &mut Transport) {
    if std::env::var_os("OFFLOAD_MPI_TEST_SLOW").is_none() {
        return;
    }
    let step = offload::plugins::remote::settings::seconds_from_env("OFFLOAD_MPI_TEST_SLOW", 10.0);
    SLOW_STEP_MS.store(step.as_millis() as u64, Ordering::Relaxed);
    // SAFETY: the handler only stores an atomic, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGUSR1, turn_slow as *const () as libc::sighandler_t) };
    transport.set_stall(stall);
}

/// Whether the hook made this server slow.
pub fn is_slow() -> bool {
    SLOW.load(Ordering::Acquire)
}

fn stall() {
    if is_slow() {
        std::thread::sleep(Duration::from_millis(SLOW_STEP_MS.load(Ordering::Relaxed)));
    }
}
