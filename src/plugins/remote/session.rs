//! The application's side of an MPI job: which ranks serve devices, and the exchanges
//! with them (a request, the data that goes with it, the reply, the data that comes
//! back). Each exchange has a tag of its own, which its data and reply carry, so that
//! any number of threads and queues talk to one server at once without waiting for each
//! other (a queue waiting for a long kernel does not hold up another queue's copies). A
//! server that does not answer within the timeout turns the operation into an error
//! naming it, never a hang. At process exit every server is told to stop.

use super::abi::{FIRST_OPERATION_TAG, TAG_HEARTBEAT, TAG_REQUEST};
use super::beat::{self, Beat};
use super::engine::{Engine, Parked, Slot};
use super::fragments::DEFAULT_FRAGMENT;
use super::link::{Link, LinkError};
use super::settings::{start_timeout, timeout};
use super::wire::{self, Reply, Request};
use crate::plugin::foundation::copy;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Operation tags wrap around here (far below `MPI_TAG_UB`'s least allowed value in
/// OpenMPI and MPICH; far more than the exchanges ever in flight at once).
const LAST_OPERATION_TAG: i32 = 1 << 22;

/// How long a waiting thread sleeps before it looks at the server's signs of life.
const SLICE: Duration = Duration::from_millis(100);
/// How long a waiting thread polls for its reply itself before the engine takes over.
const POLL_FIRST: Duration = Duration::from_micros(500);
/// How long a last word to a lost server (at exit: stop, if you ever come back) may
/// take to leave.
const LAST_WORD: Duration = Duration::from_millis(100);

/// One server rank as the application knows it.
struct Server {
    rank: i32,
    /// Once the server was lost, why: a server that stopped answering (or whose answer
    /// made no sense) is never spoken to again, so every later operation on its devices
    /// fails at once instead of waiting out the timeout once more.
    lost: Mutex<Option<String>>,
}

pub struct Session {
    link: Link,
    servers: Vec<Server>,
    timeout: Duration,
    next_tag: AtomicU32,
    /// Copies between two servers go one at a time: each server sends its half while it
    /// serves the request, and two in opposite directions would wait for each other.
    between: Mutex<()>,
    /// Where long waits for replies go.
    engine: Engine,
    /// The application's "still here" to the servers (see `beat`).
    beat: Arc<Beat>,
}

/// How long a heartbeat may take to go before it is given up (an empty message goes at
/// once to a server that is there).
const BEAT_WITHIN: Duration = Duration::from_millis(100);

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
    let timeout = timeout();
    let (link, opened) = start_mpi(timeout)?;
    let (size, rank) = opened?;
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
        })
        .collect();
    let session = Arc::new(Session {
        link,
        servers,
        timeout,
        next_tag: AtomicU32::new(0),
        between: Mutex::new(()),
        engine: Engine::default(),
        beat: Arc::default(),
    });
    // SAFETY: registering a plain extern "C" function.
    unsafe { libc::atexit(stop_servers) };
    let beating = session.clone();
    let ranks = session.server_ranks().collect();
    beat::start(session.beat.clone(), ranks, move |rank| beating.beat(rank));
    Ok(session)
}

/// A started link and what its start gave (the job's size and this rank, or why not).
type Opened = std::result::Result<(i32, i32), String>;

/// A server's device code printed `output`: it goes into this process's own C
/// standard output stream, where a kernel on the host device would have printed it, so
/// it comes in the same order with what the program prints (and is flushed with it).
fn print_device_output(output: &[u8]) {
    extern "C" {
        /// The C library's standard output stream.
        static mut stdout: *mut libc::FILE;
    }
    // SAFETY: the C library's own stream, written through its own locked function.
    unsafe { libc::fwrite(output.as_ptr().cast(), 1, output.len(), stdout) };
}

/// How long the start thread may take to begin running before the caller takes it for
/// blocked by the loader's lock (see `start_mpi`).
const START_THREAD_GRACE: Duration = Duration::from_secs(1);

/// Starts MPI. MPI's start waits for every rank, so it runs on a thread of its own,
/// left behind when the servers never come (`OFFLOAD_MPI_START_TIMEOUT`). But a program
/// may reach liboffload from a library's constructor, inside `dlopen`, whose lock the
/// calling thread then holds: a new thread cannot begin (its thread-locals register
/// with the loader) and MPI opens its components with `dlopen` too. When the thread has
/// not begun within `START_THREAD_GRACE`, the caller claims the start and runs it
/// itself; there it has no deadline of ours, and mpirun's abort of a job whose rank
/// ended before MPI started is what ends it.
fn start_mpi(timeout: Duration) -> std::result::Result<(Link, Opened), String> {
    const UNCLAIMED: u8 = 0;
    const BY_THREAD: u8 = 1;
    const BY_CALLER: u8 = 2;
    let link = Link::load()?;
    let claim = Arc::new(std::sync::atomic::AtomicU8::new(UNCLAIMED));
    let (started, start) = std::sync::mpsc::channel();
    let thread_claim = claim.clone();
    std::thread::Builder::new()
        .name("offload-mpi-start".into())
        .spawn(move || {
            let claimed = thread_claim.compare_exchange(
                UNCLAIMED,
                BY_THREAD,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if claimed.is_ok() {
                let opened = link.open(timeout);
                let _ = started.send((link, opened));
            }
        })
        .map_err(|e| format!("no thread to start MPI: {e}"))?;
    let begun_by = Instant::now() + START_THREAD_GRACE;
    while claim.load(Ordering::Acquire) == UNCLAIMED && Instant::now() < begun_by {
        std::thread::sleep(Duration::from_millis(1));
    }
    if claim
        .compare_exchange(UNCLAIMED, BY_CALLER, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        let link = Link::load()?;
        let opened = link.open(timeout);
        return Ok((link, opened));
    }
    let limit = start_timeout();
    start.recv_timeout(limit).map_err(|_| {
        format!(
            "MPI did not start within {:.0} s: the other ranks of the job (the servers) never started it (OFFLOAD_MPI_START_TIMEOUT)",
            limit.as_secs_f64()
        )
    })
}

/// At exit: every server is told to stop, all at once, and their answers awaited
/// together (each within the liveness rule); a lost server gets the same word without
/// an answer awaited (a stopped or slowed one that comes back then ends). MPI is
/// finalised only when every server answered, and then within the timeout: finalising
/// waits for every rank, and a lost one may never come.
extern "C" fn stop_servers() {
    let Some(Ok(session)) = SESSION.get() else {
        return;
    };
    use crate::plugin::foundation::flags::trace;
    // From here the exit request says it; no beat may be under way when MPI ends.
    session.beat.stop();
    let mut asked = Vec::new();
    for server in &session.servers {
        let tag = session.operation_tag();
        let envelope = wire::envelope(tag, &Request::Exit);
        if server.lost.lock().is_some() {
            let _ = session
                .link
                .send(server.rank, TAG_REQUEST, &envelope, Some(LAST_WORD));
            continue;
        }
        match session.start(server.rank, tag, &Request::Exit, &[]) {
            Ok(()) => asked.push((server, tag)),
            Err(e) => {
                session.settle(server, &Request::Exit, Err(e)).ok();
            }
        }
    }
    for ((server, _), answer) in asked.iter().zip(session.await_replies(&asked, false)) {
        let outcome = answer
            .unwrap_or_else(|| Err("not awaited".into()))
            .map(|_| Reply::Done)
            .map_err(Failure::Lost);
        if let Err(e) = session.settle(server, &Request::Exit, outcome) {
            let rank = server.rank;
            trace(|| format!("MPI: stopping rank {rank}: {}", e.details));
        }
    }
    if session.servers.iter().any(|s| s.lost.lock().is_some()) {
        trace(|| "MPI: a server was lost; not finalising MPI".into());
        return;
    }
    if !session.link.close(session.timeout) {
        trace(|| "MPI: MPI_Finalize did not return within the timeout; exiting without it".into());
    }
}

impl Session {
    pub fn server_ranks(&self) -> impl Iterator<Item = i32> + '_ {
        self.servers.iter().map(|s| s.rank)
    }

    /// One heartbeat to server `rank` unless it is lost (an empty message, given up
    /// when it has not gone within `BEAT_WITHIN`): whether it went.
    fn beat(&self, rank: i32) -> bool {
        let Some(server) = self.servers.iter().find(|s| s.rank == rank) else {
            return false;
        };
        server.lost.lock().is_none()
            && self
                .link
                .send(rank, TAG_HEARTBEAT, &[], Some(BEAT_WITHIN))
                .is_ok()
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

    /// Ok while server `rank` has not been lost; the reason it was, after.
    pub fn check_alive(&self, rank: i32) -> Result<()> {
        self.usable(rank).map(|_| ())
    }

    /// The server, unless it was lost earlier.
    fn usable(&self, rank: i32) -> Result<&Server> {
        let server = self.server(rank)?;
        match server.lost.lock().as_ref() {
            Some(why) => Err(Self::lost(rank, format!("lost earlier: {why}"))),
            None => Ok(server),
        }
    }

    /// The caller's result of an exchange; a lost server is marked so, the details
    /// saying what was asked of it.
    fn settle(
        &self,
        server: &Server,
        request: &Request,
        outcome: std::result::Result<Reply, Failure>,
    ) -> Result<Reply> {
        match outcome {
            Ok(reply) => Ok(reply),
            Err(Failure::Refused(e)) => Err(e),
            Err(Failure::Lost(why)) => {
                let rank = server.rank;
                let why = format!("{}: {why}", request.describe());
                crate::plugin::foundation::flags::trace(|| format!("MPI: rank {rank} lost: {why}"));
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
        self.settle(server, request, outcome)
    }

    /// A request the server does not answer (a queued launch): sent, after every
    /// request sent before it by this thread.
    pub fn post(&self, rank: i32, request: &Request) -> Result<()> {
        let server = self.usable(rank)?;
        let tag = self.operation_tag();
        let outcome = self.start(rank, tag, request, &[]).map(|()| Reply::Done);
        self.settle(server, request, outcome).map(|_| ())
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
        // Both answers are awaited together: when one server is lost, the other (which
        // waits for its data) is not waited for any longer, so the copy fails within
        // the timeout whichever side went.
        let mut waits = Vec::new();
        if asked_from.is_ok() {
            waits.push((from, tag));
        }
        if asked_to.is_ok() {
            waits.push((to, tag));
        }
        let mut answers = self.await_replies(&waits, true).into_iter();
        let mut answer = |asked: std::result::Result<(), Failure>, server: &Server| {
            asked?;
            match answers.next().flatten() {
                Some(reply) => self.decode(reply.map_err(Failure::Lost)?, &mut []),
                None => Err(Failure::Refused(Error::new(
                    ErrorCode::BackendFailure,
                    format!(
                        "rank {}: not awaited: the other server of the copy was lost",
                        server.rank
                    ),
                ))),
            }
        };
        let sent = answer(asked_from, from);
        let received = answer(asked_to, to);
        let sent = self.settle(from, sender.1, sent);
        let received = self.settle(to, receiver.1, received);
        // The lost side's error first: it says what happened.
        match (sent, received) {
            (Ok(_), Ok(_)) => Ok(()),
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
            (Err(a), Err(b)) => Err(if from.lost.lock().is_some() { a } else { b }),
        }
    }

    /// The first half of an exchange: the request (with its tag) and the data it carries.
    fn start(
        &self,
        rank: i32,
        tag: i32,
        request: &Request,
        outgoing: &[u8],
    ) -> std::result::Result<(), Failure> {
        let lost = |e: LinkError| Failure::Lost(e.text());
        self.link
            .send(rank, TAG_REQUEST, &wire::envelope(tag, request), None)
            .map_err(lost)?;
        if !outgoing.is_empty() {
            self.link
                .send_fragments(rank, tag, outgoing, DEFAULT_FRAGMENT)
                .map_err(lost)?;
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
        let reply = self.decode(bytes, incoming)?;
        if let (Reply::Done, false) = (&reply, incoming.is_empty()) {
            let received =
                self.link
                    .receive_fragments(server.rank, tag, incoming, DEFAULT_FRAGMENT);
            match received {
                Ok(()) => {}
                // The server's device failed midway; the server itself goes on.
                Err(LinkError::GaveUp(e)) => {
                    return Err(Failure::Refused(Error::new(
                        ErrorCode::BackendFailure,
                        format!("rank {}: the read failed midway: {e}", server.rank),
                    )))
                }
                Err(e) => return Err(Failure::Lost(e.text())),
            }
        }
        Ok(reply)
    }

    /// A reply's meaning: the server's refusal, a small read's data (copied into
    /// `incoming`, answered as `Done` with nothing more to come), or the reply itself.
    fn decode(&self, bytes: Vec<u8>, incoming: &mut [u8]) -> std::result::Result<Reply, Failure> {
        let mut reply = Reply::decode(&bytes)
            .map_err(|e| Failure::Lost(format!("an unreadable reply: {}", e.0)))?;
        if let Reply::Output { output, then } = reply {
            print_device_output(&output);
            reply = *then;
        }
        match reply {
            Reply::Ended { details } => Err(Failure::Lost(details)),
            Reply::Error { code, details } => Err(Failure::Refused(Error::new(
                ErrorCode::from_value(code),
                details,
            ))),
            // A small read: its data came inside the reply.
            Reply::Data(data) if data.len() != incoming.len() => Err(Failure::Lost(format!(
                "{} bytes of data where {} were asked for",
                data.len(),
                incoming.len()
            ))),
            Reply::Data(data) => {
                copy::copy_slice(incoming, &data);
                Ok(Reply::Data(Vec::new()))
            }
            reply => Ok(reply),
        }
    }

    /// The reply of `server` to the exchange `tag` (see `await_replies`).
    fn await_reply(&self, server: &Server, tag: i32) -> std::result::Result<Vec<u8>, String> {
        // Most replies come within microseconds: polled for a moment first.
        match self.link.receive(server.rank, tag, Some(POLL_FIRST)) {
            Ok(bytes) => return Ok(bytes),
            Err(LinkError::Silent(_)) => {}
            Err(e) => return Err(e.text()),
        }
        self.await_replies(&[(server, tag)], false)
            .pop()
            .flatten()
            .unwrap_or_else(|| Err("no answer awaited".into()))
    }

    /// The replies of servers to exchanges, awaited together. The waiting thread looks
    /// once; then it hands the waits to the engine thread and sleeps. A busy
    /// server says it is alive every half second (a long kernel or transfer is no
    /// silence); one that says nothing for the timeout (or is lost meanwhile) gets an
    /// error instead of an answer, so no wait lasts longer than the timeout after its
    /// server's last sign of life. With `stop_on_loss`, the first such error ends the
    /// other waits too (`None`: not awaited).
    fn await_replies(
        &self,
        waits: &[(&Server, i32)],
        stop_on_loss: bool,
    ) -> Vec<Option<std::result::Result<Vec<u8>, String>>> {
        let started = Instant::now();
        let mut answers: Vec<Option<std::result::Result<Vec<u8>, String>>> =
            waits.iter().map(|_| None).collect();
        for (i, (server, tag)) in waits.iter().enumerate() {
            match self.link.receive(server.rank, *tag, Some(Duration::ZERO)) {
                Ok(bytes) => answers[i] = Some(Ok(bytes)),
                Err(LinkError::Silent(_)) => {}
                Err(e) => answers[i] = Some(Err(e.text())),
            }
        }
        if !self.engine.start(start_engine) {
            return self.poll_replies(waits, answers, stop_on_loss, started);
        }
        let slots: Vec<Option<Arc<Slot>>> = waits
            .iter()
            .zip(&answers)
            .map(|((server, tag), answer)| {
                answer
                    .is_none()
                    .then(|| self.engine.park(server.rank, *tag, start_engine))
            })
            .collect();
        loop {
            // Sleep on the first open wait; then look at every open one.
            if let Some(i) = answers.iter().position(Option::is_none) {
                if let Some(reply) = slots[i].as_ref().and_then(|s| s.wait(SLICE)) {
                    answers[i] = Some(reply);
                }
            }
            for (i, (server, _)) in waits.iter().enumerate() {
                let Some(slot) = slots[i].as_ref().filter(|_| answers[i].is_none()) else {
                    continue;
                };
                if let Some(reply) = slot.wait(Duration::ZERO) {
                    answers[i] = Some(reply);
                    continue;
                }
                let Some(why) = self.given_up(server, started) else {
                    continue;
                };
                self.engine.unpark(slot);
                // The engine may have delivered it just now.
                answers[i] = Some(slot.wait(Duration::ZERO).unwrap_or(Err(why)));
            }
            let failed = answers.iter().any(|a| matches!(a, Some(Err(_))));
            if answers.iter().all(Option::is_some) || (stop_on_loss && failed) {
                for (slot, answer) in slots.iter().zip(&answers) {
                    if let (Some(slot), None) = (slot, answer) {
                        self.engine.unpark(slot);
                    }
                }
                return answers;
            }
        }
    }

    /// Why a wait for `server` that began at `started` ends without its reply: the
    /// server was lost meanwhile, or has been silent for longer than the timeout (the
    /// liveness rule); `None` while it may still come.
    fn given_up(&self, server: &Server, started: Instant) -> Option<String> {
        let silence = started.elapsed().min(self.link.silence(server.rank));
        if let Some(why) = server.lost.lock().clone() {
            return Some(format!("lost meanwhile: {why}"));
        }
        (silence > self.timeout).then(|| {
            format!(
                "no answer and no sign of life for {:.1} s (OFFLOAD_MPI_TIMEOUT)",
                silence.as_secs_f64()
            )
        })
    }

    /// `await_replies` while the engine thread does not run yet: this thread looks for
    /// the replies itself, under the same rule of silence and loss.
    fn poll_replies(
        &self,
        waits: &[(&Server, i32)],
        mut answers: Vec<Option<std::result::Result<Vec<u8>, String>>>,
        stop_on_loss: bool,
        started: Instant,
    ) -> Vec<Option<std::result::Result<Vec<u8>, String>>> {
        loop {
            for (i, (server, tag)) in waits.iter().enumerate() {
                if answers[i].is_some() {
                    continue;
                }
                match self.link.receive(server.rank, *tag, Some(POLL_FIRST)) {
                    Ok(bytes) => answers[i] = Some(Ok(bytes)),
                    Err(LinkError::Silent(_)) => {
                        answers[i] = self.given_up(server, started).map(Err);
                    }
                    Err(e) => answers[i] = Some(Err(e.text())),
                }
            }
            let failed = answers.iter().any(|a| matches!(a, Some(Err(_))));
            if answers.iter().all(Option::is_some) || (stop_on_loss && failed) {
                return answers;
            }
        }
    }

    /// The engine thread's work: a parked exchange's reply if it came.
    fn take_reply(&self, parked: &Parked) -> Option<std::result::Result<Vec<u8>, String>> {
        match self
            .link
            .receive(parked.rank, parked.tag, Some(Duration::ZERO))
        {
            Ok(bytes) => Some(Ok(bytes)),
            Err(LinkError::Silent(_)) => None,
            Err(e) => Some(Err(e.text())),
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
        .spawn(move || session.engine.poll(|p| session.take_reply(p)));
    if let Err(e) = spawned {
        crate::plugin::foundation::flags::trace(|| format!("MPI: no engine thread: {e}"));
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
