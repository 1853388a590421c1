//! The application's side of an MPI job: which ranks serve devices, and the exchanges
//! with them (a request, the data that goes with it, the reply, the data that comes
//! back). Each exchange has a tag of its own, which its data and reply carry, so that
//! any number of threads and queues talk to one server at once without waiting for each
//! other (a queue waiting for a long kernel does not hold up another queue's copies). A
//! server that does not answer within the timeout turns the operation into an error
//! naming it, never a hang. At process exit every server is told to stop.

use super::engine::{Engine, Parked};
use super::fragments::DEFAULT_FRAGMENT;
use super::link::Link;
use super::wire::{self, Reply, Request};
use crate::runtime::error::{Error, ErrorCode, Result};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The tags of `remote-mpi`'s transport (remote-mpi/src/transport.rs): requests, a
/// busy server's heartbeats, and from `FIRST_OPERATION_TAG` on, one per exchange.
pub const TAG_REQUEST: i32 = 1;
pub const TAG_HEARTBEAT: i32 = 4;
pub const FIRST_OPERATION_TAG: i32 = 16;
/// Operation tags wrap around here (far below `MPI_TAG_UB`'s least allowed value in
/// OpenMPI and MPICH; far more than the exchanges ever in flight at once).
const LAST_OPERATION_TAG: i32 = 1 << 22;

/// How long a waiting thread sleeps before it looks at the server's signs of life.
const SLICE: Duration = Duration::from_millis(100);
/// How long a waiting thread polls for its reply itself before the engine takes over.
const POLL_FIRST: Duration = Duration::from_micros(500);

/// How long a server may take to answer (`OFFLOAD_MPI_TIMEOUT`, seconds; default 5).
pub fn timeout() -> Duration {
    let seconds = std::env::var("OFFLOAD_MPI_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(5.0);
    Duration::from_secs_f64(seconds)
}

/// One server rank as the application knows it.
struct Server {
    rank: i32,
    /// Once the server was lost, why: a server that stopped answering (or whose answer
    /// made no sense) is never spoken to again, so every later operation on its devices
    /// fails at once instead of waiting out the timeout once more.
    lost: Mutex<Option<String>>,
    /// When it was last heard from (nanoseconds after the session opened): any thread
    /// that hears a heartbeat or an answer says so for all that wait on it.
    heard: AtomicU64,
}

pub struct Session {
    link: Link,
    servers: Vec<Server>,
    timeout: Duration,
    opened: Instant,
    next_tag: AtomicU32,
    /// Copies between two servers go one at a time: each server sends its half while it
    /// serves the request, and two in opposite directions would wait for each other.
    between: Mutex<()>,
    /// Where long waits for replies go.
    engine: Engine,
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
    let servers = (0..rank)
        .map(|rank| Server {
            rank,
            lost: Mutex::new(None),
            heard: AtomicU64::new(0),
        })
        .collect();
    let session = Arc::new(Session {
        link,
        servers,
        timeout: timeout(),
        opened: Instant::now(),
        next_tag: AtomicU32::new(0),
        between: Mutex::new(()),
        engine: Engine::default(),
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
    for server in &session.servers {
        if server.lost.lock().is_some() {
            continue;
        }
        if let Err(e) = session.exchange(server.rank, &Request::Exit, &[], &mut []) {
            let rank = server.rank;
            crate::runtime::config::trace(|| format!("MPI: stopping rank {rank}: {e:?}"));
        }
    }
    // Finalising MPI may wait for every rank, a dead one too: with a server lost (before
    // or by the stop just sent), the process exits without finalising. The kill test
    // hung now and then under a parallel ctest, and this is the one wait left at exit.
    if session.servers.iter().any(|s| s.lost.lock().is_some()) {
        crate::runtime::config::trace(|| "MPI: a server was lost; not finalising MPI".into());
        return;
    }
    session.link.close();
}

impl Session {
    pub fn server_ranks(&self) -> impl Iterator<Item = i32> + '_ {
        self.servers.iter().map(|s| s.rank)
    }

    fn lost(rank: i32, e: String) -> Error {
        Error::new(ErrorCode::BackendFailure, format!("rank {rank}: {e}"))
    }

    /// A tag no exchange in flight has (they go round, millions apart).
    fn operation_tag(&self) -> i32 {
        let n = self.next_tag.fetch_add(1, Ordering::Relaxed);
        FIRST_OPERATION_TAG + (n % (LAST_OPERATION_TAG - FIRST_OPERATION_TAG) as u32) as i32
    }

    fn server(&self, rank: i32) -> Result<&Server> {
        self.servers.iter().find(|s| s.rank == rank).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidDevice,
                format!("rank {rank} serves no devices"),
            )
        })
    }

    /// The server, unless it was lost earlier.
    fn usable(&self, rank: i32) -> Result<&Server> {
        let server = self.server(rank)?;
        match server.lost.lock().as_ref() {
            Some(why) => Err(Self::lost(rank, format!("lost earlier: {why}"))),
            None => Ok(server),
        }
    }

    /// The caller's result of an exchange; a lost server is marked so.
    fn settle(
        &self,
        server: &Server,
        outcome: std::result::Result<Reply, Failure>,
    ) -> Result<Reply> {
        match outcome {
            Ok(reply) => Ok(reply),
            Err(Failure::Refused(e)) => Err(e),
            Err(Failure::Lost(why)) => {
                let rank = server.rank;
                crate::runtime::config::trace(|| format!("MPI: rank {rank} lost: {why}"));
                let error = Self::lost(rank, why.clone());
                server.lost.lock().get_or_insert(why);
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
        let server = self.usable(rank)?;
        let tag = self.operation_tag();
        let outcome = self
            .start(rank, tag, request, outgoing)
            .and_then(|()| self.finish(server, tag, incoming));
        self.settle(server, outcome)
    }

    /// A request the server does not answer (a queued launch): sent, after every
    /// request sent before it by this thread.
    pub fn post(&self, rank: i32, request: &Request) -> Result<()> {
        let server = self.usable(rank)?;
        let tag = self.operation_tag();
        let outcome = self.start(rank, tag, request, &[]).map(|()| Reply::Done);
        self.settle(server, outcome).map(|_| ())
    }

    /// A copy from one server straight to another: `sender` (a `SendTo`) and `receiver`
    /// (a `ReceiveFrom`) are asked together, with one tag for the data between them,
    /// and both answers awaited.
    pub fn exchange_between(
        &self,
        sender: (i32, &Request),
        receiver: (i32, &Request),
    ) -> Result<()> {
        if sender.0 == receiver.0 {
            return Err(Error::invalid_argument(format!(
                "a copy between two servers names rank {} twice",
                sender.0
            )));
        }
        let (from, to) = (self.usable(sender.0)?, self.usable(receiver.0)?);
        let _one_at_a_time = self.between.lock();
        let tag = self.operation_tag();
        let asked_to = self.start(receiver.0, tag, receiver.1, &[]);
        let asked_from = self.start(sender.0, tag, sender.1, &[]);
        // Each server that was asked answers once, whatever the other does (a receiver
        // whose sender fails hears so and says so), so both answers are awaited.
        let sent = asked_from.and_then(|()| self.finish(from, tag, &mut []));
        let received = asked_to.and_then(|()| self.finish(to, tag, &mut []));
        let sent = self.settle(from, sent);
        let received = self.settle(to, received);
        sent.and(received).map(|_| ())
    }

    /// The first half of an exchange: the request (with its tag) and the data it carries.
    fn start(
        &self,
        rank: i32,
        tag: i32,
        request: &Request,
        outgoing: &[u8],
    ) -> std::result::Result<(), Failure> {
        self.link
            .send(rank, TAG_REQUEST, &wire::envelope(tag, request))
            .map_err(Failure::Lost)?;
        if !outgoing.is_empty() {
            self.link
                .send_fragments(rank, tag, outgoing, DEFAULT_FRAGMENT)
                .map_err(Failure::Lost)?;
        }
        Ok(())
    }

    /// The second half: the reply, then the data that comes with a successful one.
    fn finish(
        &self,
        server: &Server,
        tag: i32,
        incoming: &mut [u8],
    ) -> std::result::Result<Reply, Failure> {
        let bytes = self.await_reply(server, tag).map_err(Failure::Lost)?;
        let reply = Reply::decode(&bytes)
            .map_err(|e| Failure::Lost(format!("an unreadable reply: {}", e.0)))?;
        if let Reply::Error { code, details } = reply {
            return Err(Failure::Refused(Error::new(
                ErrorCode::from_value(code),
                details,
            )));
        }
        if let Reply::Data(data) = reply {
            // A small read: its data came inside the reply.
            if data.len() != incoming.len() {
                return Err(Failure::Lost(format!(
                    "{} bytes of data where {} were asked for",
                    data.len(),
                    incoming.len()
                )));
            }
            incoming.copy_from_slice(&data);
            return Ok(Reply::Done);
        }
        if !incoming.is_empty() {
            let received = self.link.receive_fragments(
                server.rank,
                tag,
                self.timeout,
                incoming,
                DEFAULT_FRAGMENT,
            );
            match received {
                Ok(()) => {}
                // The server's device failed midway; the server itself goes on.
                Err((true, e)) => {
                    return Err(Failure::Refused(Error::new(
                        ErrorCode::BackendFailure,
                        format!("rank {}: the read failed midway: {e}", server.rank),
                    )))
                }
                Err((false, e)) => return Err(Failure::Lost(e)),
            }
        }
        Ok(reply)
    }

    /// Notes that `server` was heard from now.
    fn heard(&self, server: &Server) {
        let now = self.opened.elapsed().as_nanos() as u64;
        server.heard.fetch_max(now, Ordering::Relaxed);
    }

    /// The reply of `server` to the exchange `tag`. The waiting thread polls for a
    /// moment; then it hands the wait to the engine thread and sleeps. A busy server says
    /// it is alive every half second (a long kernel or transfer is no silence); one that
    /// says nothing for the timeout is lost, and the operation fails instead of hanging.
    fn await_reply(&self, server: &Server, tag: i32) -> std::result::Result<Vec<u8>, String> {
        self.heard(server);
        match self.link.receive_or_time_out(server.rank, tag, POLL_FIRST) {
            Ok(bytes) => {
                self.heard(server);
                return Ok(bytes);
            }
            Err((false, e)) => return Err(e),
            Err((true, _)) => {}
        }
        let slot = self.engine.park(server.rank, tag, start_engine);
        loop {
            if let Some(reply) = slot.wait(SLICE) {
                return reply;
            }
            let heard = Duration::from_nanos(server.heard.load(Ordering::Relaxed));
            let silent = self.opened.elapsed().saturating_sub(heard) > self.timeout;
            let lost = server.lost.lock().clone();
            if silent || lost.is_some() {
                self.engine.unpark(&slot);
                // The engine may have delivered it just now.
                if let Some(reply) = slot.wait(Duration::ZERO) {
                    return reply;
                }
                return Err(match lost {
                    Some(why) => format!("lost meanwhile: {why}"),
                    None => format!(
                        "no answer and no sign of life for {:.1} s (OFFLOAD_MPI_TIMEOUT)",
                        self.timeout.as_secs_f64()
                    ),
                });
            }
        }
    }

    /// The engine thread's work: a parked exchange's reply if it came, and the
    /// heartbeats of a rank.
    fn take_reply(&self, parked: &Parked) -> Option<std::result::Result<Vec<u8>, String>> {
        match self
            .link
            .receive_or_time_out(parked.rank, parked.tag, Duration::ZERO)
        {
            Ok(bytes) => {
                if let Ok(server) = self.server(parked.rank) {
                    self.heard(server);
                }
                Some(Ok(bytes))
            }
            Err((true, _)) => None,
            Err((false, e)) => Some(Err(e)),
        }
    }

    fn take_heartbeats(&self, rank: i32) {
        let Ok(server) = self.server(rank) else {
            return;
        };
        while self
            .link
            .receive_or_time_out(rank, TAG_HEARTBEAT, Duration::ZERO)
            .is_ok()
        {
            self.heard(server);
        }
    }
}

/// Starts the engine thread of the process's session.
fn start_engine() {
    let Some(Ok(session)) = SESSION.get().cloned() else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("offload-mpi-engine".into())
        .spawn(move || {
            session.engine.poll(
                |p| session.take_reply(p),
                |rank| session.take_heartbeats(rank),
            )
        });
    if let Err(e) = spawned {
        crate::runtime::config::trace(|| format!("MPI: no engine thread: {e}"));
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
