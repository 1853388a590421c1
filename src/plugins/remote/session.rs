//! The application's side of an MPI job: which ranks serve devices, and one exchange at
//! a time with each (a request, the data that goes with it, the reply, the data that
//! comes back). A server that does not answer within the timeout turns the operation
//! into an error naming it, never a hang. At process exit every server is told to stop.

use super::fragments::DEFAULT_FRAGMENT;
use super::link::Link;
use super::wire::{Reply, Request};
use crate::runtime::error::{Error, ErrorCode, Result};
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The tags of `remote-mpi`'s transport (remote-mpi/src/transport.rs).
pub const TAG_REQUEST: i32 = 1;
pub const TAG_REPLY: i32 = 2;
pub const TAG_DATA: i32 = 3;
pub const TAG_HEARTBEAT: i32 = 4;

/// How long one wait for a reply lasts before the server's heartbeats are looked at.
const SLICE: Duration = Duration::from_millis(100);

/// How long a server may take to answer (`OFFLOAD_MPI_TIMEOUT`, seconds; default 5).
pub fn timeout() -> Duration {
    let seconds = std::env::var("OFFLOAD_MPI_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(5.0);
    Duration::from_secs_f64(seconds)
}

pub struct Session {
    link: Link,
    /// The server ranks, each with the lock that keeps its exchanges whole and, once
    /// the server was lost, why: a server that stopped answering (or whose reply came
    /// after the timeout, out of step) is never spoken to again, so every later operation
    /// on its devices fails at once instead of waiting out the timeout once more.
    servers: Vec<(i32, Mutex<Option<String>>)>,
    timeout: Duration,
}

static SESSION: OnceLock<std::result::Result<Arc<Session>, String>> = OnceLock::new();

/// Whether an MPI launcher started this process (its environment says so).
fn launched_by_mpi() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

/// The process's session, opened on first use (MPI is initialised once per process).
pub fn session() -> std::result::Result<Arc<Session>, String> {
    SESSION.get_or_init(open).clone()
}

fn open() -> std::result::Result<Arc<Session>, String> {
    if !launched_by_mpi() {
        return Err(
            "not started by an MPI launcher (mpirun ... offload-mpi-device : ./app)".into(),
        );
    }
    let link = Link::load()?;
    let (size, rank) = link.open()?;
    if size < 2 {
        return Err(format!("the MPI job has {size} process: no server ranks"));
    }
    if rank != size - 1 {
        return Err(format!(
            "this is rank {rank} of {size}; the application must be the last rank (mpirun -np N offload-mpi-device : -np 1 ./app)"
        ));
    }
    let session = Arc::new(Session {
        link,
        servers: (0..rank).map(|r| (r, Mutex::new(None))).collect(),
        timeout: timeout(),
    });
    // SAFETY: registering a plain extern "C" function.
    unsafe { libc::atexit(stop_servers) };
    Ok(session)
}

/// At exit: every server is told to stop (and answers) before MPI is finalised; a lost
/// one is not waited for.
extern "C" fn stop_servers() {
    let Some(Ok(session)) = SESSION.get() else {
        return;
    };
    for (rank, lost) in &session.servers {
        if lost.lock().is_some() {
            continue;
        }
        if let Err(e) = session.exchange(*rank, &Request::Exit, &[], &mut []) {
            crate::runtime::config::trace(|| format!("MPI: stopping rank {rank}: {e:?}"));
        }
    }
    // Finalising MPI may wait for every rank, a dead one too: with a server lost (before
    // or by the stop just sent), the process exits without finalising. The kill test
    // hung now and then under a parallel ctest, and this is the one wait left at exit.
    if session
        .servers
        .iter()
        .any(|(_, lost)| lost.lock().is_some())
    {
        crate::runtime::config::trace(|| "MPI: a server was lost; not finalising MPI".into());
        return;
    }
    session.link.close();
}

impl Session {
    pub fn server_ranks(&self) -> impl Iterator<Item = i32> + '_ {
        self.servers.iter().map(|(r, _)| *r)
    }

    fn lost(rank: i32, e: String) -> Error {
        Error::new(ErrorCode::BackendFailure, format!("rank {rank}: {e}"))
    }

    /// The reply of server `rank`. A busy server says it is alive every half second
    /// (a long kernel or transfer is no silence); one that says nothing for the timeout
    /// is lost, and the operation fails instead of hanging.
    fn await_reply(&self, rank: i32) -> std::result::Result<Vec<u8>, String> {
        let mut alive = std::time::Instant::now();
        loop {
            match self.link.receive_or_time_out(rank, TAG_REPLY, SLICE) {
                Ok(bytes) => return Ok(bytes),
                Err((true, _)) => {
                    while self
                        .link
                        .receive_or_time_out(rank, TAG_HEARTBEAT, Duration::ZERO)
                        .is_ok()
                    {
                        alive = std::time::Instant::now();
                    }
                    if alive.elapsed() > self.timeout {
                        return Err(format!(
                            "no answer and no sign of life for {:.1} s (OFFLOAD_MPI_TIMEOUT)",
                            self.timeout.as_secs_f64()
                        ));
                    }
                }
                Err((false, e)) => return Err(e),
            }
        }
    }

    /// The lock that keeps server `rank`'s exchanges whole (holding, once the server was
    /// lost, why).
    fn conversation(&self, rank: i32) -> Result<&Mutex<Option<String>>> {
        self.servers
            .iter()
            .find(|(r, _)| *r == rank)
            .map(|(_, l)| l)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidDevice,
                    format!("rank {rank} serves no devices"),
                )
            })
    }

    /// Fails at once for a server lost earlier.
    fn usable(rank: i32, lost: &Option<String>) -> Result<()> {
        match lost {
            Some(why) => Err(Self::lost(rank, format!("lost earlier: {why}"))),
            None => Ok(()),
        }
    }

    /// The caller's result of an exchange; a lost server is marked so.
    fn settle(
        rank: i32,
        lost: &mut Option<String>,
        outcome: std::result::Result<Reply, Failure>,
    ) -> Result<Reply> {
        match outcome {
            Ok(reply) => Ok(reply),
            Err(Failure::Refused(e)) => Err(e),
            Err(Failure::Lost(why)) => {
                crate::runtime::config::trace(|| format!("MPI: rank {rank} lost: {why}"));
                let error = Self::lost(rank, why.clone());
                *lost = Some(why);
                Err(error)
            }
        }
    }

    /// One operation with server `rank`: `request`, then `outgoing` (the data a write
    /// carries), the reply, then, when it succeeded, `incoming.len()` bytes straight into
    /// `incoming` (a read's data, no copy on the way).
    pub fn exchange(
        &self,
        rank: i32,
        request: &Request,
        outgoing: &[u8],
        incoming: &mut [u8],
    ) -> Result<Reply> {
        let mut lost = self.conversation(rank)?.lock();
        Self::usable(rank, &lost)?;
        let outcome = self
            .start(rank, request, outgoing)
            .and_then(|()| self.finish(rank, incoming));
        Self::settle(rank, &mut lost, outcome)
    }

    /// A request the server does not answer (a queued launch): sent, in turn with the
    /// other exchanges of that server.
    pub fn post(&self, rank: i32, request: &Request) -> Result<()> {
        let mut lost = self.conversation(rank)?.lock();
        Self::usable(rank, &lost)?;
        let outcome = self.start(rank, request, &[]).map(|()| Reply::Done);
        Self::settle(rank, &mut lost, outcome).map(|_| ())
    }

    /// A copy from one server straight to another: `sender` (a `SendTo`) and `receiver`
    /// (a `ReceiveFrom`) are asked together and both answers awaited. Both conversations
    /// are held, taken in rank order so that two copies in opposite directions cannot
    /// wait for each other.
    pub fn exchange_between(
        &self,
        sender: (i32, &Request),
        receiver: (i32, &Request),
    ) -> Result<()> {
        let (from, to) = (self.conversation(sender.0)?, self.conversation(receiver.0)?);
        if std::ptr::eq(from, to) {
            return Err(Error::invalid_argument(format!(
                "a copy between two servers names rank {} twice",
                sender.0
            )));
        }
        let (mut lost_from, mut lost_to) = if sender.0 < receiver.0 {
            let first = from.lock();
            (first, to.lock())
        } else {
            let first = to.lock();
            (from.lock(), first)
        };
        Self::usable(sender.0, &lost_from)?;
        Self::usable(receiver.0, &lost_to)?;
        let asked_to = self.start(receiver.0, receiver.1, &[]);
        let asked_from = self.start(sender.0, sender.1, &[]);
        // Each server that was asked answers once, whatever the other does (a receiver
        // whose sender fails hears so and says so), so both answers are awaited.
        let sent = asked_from.and_then(|()| self.finish(sender.0, &mut []));
        let received = asked_to.and_then(|()| self.finish(receiver.0, &mut []));
        let sent = Self::settle(sender.0, &mut lost_from, sent);
        let received = Self::settle(receiver.0, &mut lost_to, received);
        sent.and(received).map(|_| ())
    }

    /// The first half of an exchange: the request and the data it carries.
    fn start(
        &self,
        rank: i32,
        request: &Request,
        outgoing: &[u8],
    ) -> std::result::Result<(), Failure> {
        self.link
            .send(rank, TAG_REQUEST, &request.encode())
            .map_err(Failure::Lost)?;
        if !outgoing.is_empty() {
            self.link
                .send_fragments(rank, TAG_DATA, outgoing, DEFAULT_FRAGMENT)
                .map_err(Failure::Lost)?;
        }
        Ok(())
    }

    /// The second half: the reply, then the data that comes with a successful one.
    fn finish(&self, rank: i32, incoming: &mut [u8]) -> std::result::Result<Reply, Failure> {
        let bytes = self.await_reply(rank).map_err(Failure::Lost)?;
        let reply = Reply::decode(&bytes)
            .map_err(|e| Failure::Lost(format!("an unreadable reply: {}", e.0)))?;
        if let Reply::Error { code, details } = reply {
            return Err(Failure::Refused(Error::new(
                ErrorCode::from_value(code),
                details,
            )));
        }
        if !incoming.is_empty() {
            self.link
                .receive_fragments(rank, TAG_DATA, self.timeout, incoming, DEFAULT_FRAGMENT)
                .map_err(Failure::Lost)?;
        }
        Ok(reply)
    }
}

/// How an exchange failed: the server refused the operation (its error, the
/// conversation still in step), or the server was lost (no answer, MPI failed, or an
/// answer out of step).
enum Failure {
    Refused(Error),
    Lost(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_mpi_launcher_there_is_no_session_and_it_says_why() {
        if launched_by_mpi() {
            return; // this test process itself runs under mpirun: nothing to check
        }
        let reason = session().err().expect("no session outside mpirun");
        assert!(
            reason.contains("not started by an MPI launcher"),
            "{reason}"
        );
        let plugin = super::super::plugin::RemotePlugin;
        assert!(crate::plugin::Plugin::devices(&plugin).is_empty());
    }

    #[test]
    fn the_timeout_is_five_seconds_unless_set() {
        if std::env::var_os("OFFLOAD_MPI_TIMEOUT").is_none() {
            assert_eq!(timeout(), Duration::from_secs(5));
        }
    }
}
