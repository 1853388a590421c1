//! Byte messages between ranks of `MPI_COMM_WORLD`, where no wait lasts for ever: a send
//! or receive that makes no progress while its peer shows no sign of life (no message,
//! no heartbeat) for the timeout is abandoned and fails, naming what had moved.

use crate::abi;
use crate::aligned_bytes::AlignedBytes;
use crate::pending::{self, Abandoned, Pending};
use mpi::environment::Universe;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The tags (defined once with the C interface, in liboffload's remote backend):
/// requests, a busy server's heartbeats, and from `FIRST_OPERATION_TAG` on, one per
/// exchange, which the data and the reply of that exchange travel with.
pub use crate::abi::{FIRST_OPERATION_TAG, HEARTBEAT, TAG_HEARTBEAT, TAG_REQUEST};

/// How long a wait polls (spinning, then yielding) before it starts to sleep.
const SPIN: Duration = Duration::from_micros(200);

/// A transfer's wait polls (yielding) for as long as its bytes would take at this rate
/// (bytes per microsecond: 100 MB/s) before it starts to sleep. Over TCP, MPI moves a
/// large message's bytes only inside the calls that test it (no progress thread): a
/// wait sleeping up to 1 ms between tests stalls the very transfer it waits for (a
/// 1 MiB copy between two hosts took 2.5 times plain MPI's time).
const POLLED_BYTES_PER_US: u64 = 100;

/// How often a long wait takes its peer's heartbeats: a heartbeat counts from when it is
/// taken, so one left waiting would make a silent peer look alive for longer.
const LOOK: Duration = Duration::from_millis(50);

/// Messages up to this size travel whole in the packet that lets them be matched, with
/// every MPI transport (the smallest eager limits are some kilobytes): once matched,
/// receiving one cannot wait for its sender, so it is received at once, without the
/// cost of a request to poll.
const WHOLE_ON_ARRIVAL: usize = 1024;

/// How many communicators the exchanges are spread over (by tag).
const CHANNELS: usize = 4;

/// How a transport call failed; the C functions answer its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// MPI refused, or the peer's message made no sense.
    Failed = abi::FAILED as isize,
    /// A deadline ran out: no message in time, or no progress and no sign of life.
    Silent = abi::SILENT as isize,
    /// The sender of a transfer gave up midway (an empty fragment); still in step.
    GaveUp = abi::GAVE_UP as isize,
}

/// A failed transport call: what kind, what happened, and whether MPI may still touch
/// the caller's buffer (an abandoned send, or a receive that could not be cancelled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub text: String,
    pub buffer_in_use: bool,
}

impl Failure {
    pub fn failed(text: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Failed,
            text: text.into(),
            buffer_in_use: false,
        }
    }
}

impl From<Failure> for String {
    fn from(f: Failure) -> String {
        f.text
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// How long a receive waits for its message to come.
#[derive(Clone, Copy, Debug)]
pub enum Wait {
    /// For ever (a server waiting for its next request); once the message came, its
    /// bytes arrive under the liveness rule.
    Forever,
    /// At most this long, whatever the peer says (a first poll, a look).
    Within(Duration),
    /// Until the peer has been silent for the transport's timeout.
    Live,
}

/// MPI, initialised by us with every thread allowed to call it.
pub struct Transport {
    /// Copies of the world communicator: an exchange's data and reply go on the one its
    /// tag picks, so that threads busy with different exchanges seldom meet in one
    /// communicator's matching (MPI libraries lock each communicator's queues). Freed
    /// before MPI is finalised (fields drop in this order).
    channels: Vec<SimpleCommunicator>,
    world: SimpleCommunicator,
    _universe: Universe,
    /// How long a peer may make no progress and give no sign of life.
    timeout: Duration,
    opened: Instant,
    /// When each rank was last heard from (nanoseconds after `opened`).
    heard: Vec<AtomicU64>,
    /// How many heartbeats each rank sent that were taken, by whichever thread.
    beats: Vec<AtomicU64>,
    /// A test hook a server sets: called before every send and at every poll (the
    /// slowed-server case of the fault tests sleeps there).
    stall: Option<fn()>,
}

// SAFETY: MPI was initialised with MPI_THREAD_MULTIPLE (`open` refuses anything less),
// so its handles may be used from any thread.
unsafe impl Send for Transport {}
// SAFETY: as above.
unsafe impl Sync for Transport {}

impl Transport {
    /// Initialises MPI. Refused when MPI is initialised already (the application's own
    /// MPI use is not shared yet) or cannot give `MPI_THREAD_MULTIPLE`. `timeout`: how
    /// long a silent peer is waited for.
    pub fn open(timeout: Duration) -> Result<Transport, String> {
        let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Multiple)
        else {
            return Err("MPI is initialised already (by the application?)".into());
        };
        if threading != Threading::Multiple {
            return Err(format!(
                "MPI gives {threading:?} threading; remote devices need MPI_THREAD_MULTIPLE"
            ));
        }
        let world = universe.world();
        returning_errors(&world);
        // Collective: every rank (servers and application) makes them when it opens
        // (each inherits the world's error handler).
        let channels = (0..CHANNELS).map(|_| world.duplicate()).collect();
        let heard = (0..world.size()).map(|_| AtomicU64::new(0)).collect();
        let beats = (0..world.size()).map(|_| AtomicU64::new(0)).collect();
        Ok(Transport {
            channels,
            world,
            _universe: universe,
            timeout,
            opened: Instant::now(),
            heard,
            beats,
            stall: None,
        })
    }

    /// Sets the test hook (see `stall`).
    pub fn set_stall(&mut self, hook: fn()) {
        self.stall = Some(hook);
    }

    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    pub fn size(&self) -> i32 {
        self.world.size()
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Finalises MPI within `within`: true when done. MPI_Finalize may wait for every
    /// rank (a stopped one too), so it runs on a thread of its own, left behind when the
    /// deadline passes (the caller then exits without it).
    pub fn close(self, within: Duration) -> bool {
        let (done, finalised) = std::sync::mpsc::channel();
        let finalise = move || {
            drop(self);
            let _ = done.send(());
        };
        match std::thread::Builder::new()
            .name("offload-mpi-finalize".into())
            .spawn(finalise)
        {
            Ok(_) => finalised.recv_timeout(within).is_ok(),
            Err(_) => false,
        }
    }

    /// The communicator of messages with `tag`: the world for requests and heartbeats,
    /// one of the channels for an exchange's data and reply.
    pub(crate) fn comm(&self, tag: i32) -> &SimpleCommunicator {
        match usize::try_from(tag - FIRST_OPERATION_TAG) {
            Ok(n) if !self.channels.is_empty() => &self.channels[n % self.channels.len()],
            _ => &self.world,
        }
    }

    /// Notes that `rank` was heard from now.
    fn note_heard(&self, rank: i32) {
        if let Some(h) = of_rank(&self.heard, rank) {
            h.fetch_max(self.opened.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// How long `rank` has said nothing (no message, no heartbeat); since the transport
    /// opened when never.
    pub fn silence(&self, rank: i32) -> Duration {
        let heard = of_rank(&self.heard, rank).map_or(0, |h| h.load(Ordering::Relaxed));
        self.opened
            .elapsed()
            .saturating_sub(Duration::from_nanos(heard))
    }

    /// Takes the heartbeats `rank` sent (each a sign of life), counting them.
    pub fn take_heartbeats(&self, rank: i32) {
        let mut taken = 0;
        while let Ok(Some(_)) = self.take(rank, TAG_HEARTBEAT) {
            taken += 1;
        }
        if let Some(b) = of_rank(&self.beats, rank) {
            b.fetch_add(taken, Ordering::Relaxed);
        }
    }

    /// Whether a heartbeat of `rank` was ever taken (by any of the waits that take
    /// them, not only the caller's).
    pub fn has_beaten(&self, rank: i32) -> bool {
        of_rank(&self.beats, rank).is_some_and(|b| b.load(Ordering::Relaxed) > 0)
    }

    /// A message of `source` with `tag` if one has come (received whole, within the
    /// liveness rule), else `None` at once.
    fn take(&self, source: i32, tag: i32) -> Result<Option<AlignedBytes>, Failure> {
        match self.wait_message(source, tag, Wait::Within(Duration::ZERO)) {
            Ok((message, size)) => self.receive_matched(source, message, size).map(Some),
            Err(e) if e.kind == FailureKind::Silent => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Receives a matched message of `size` bytes (within the liveness rule).
    pub(crate) fn receive_matched(
        &self,
        source: i32,
        message: mpi::ffi::MPI_Message,
        size: usize,
    ) -> Result<AlignedBytes, Failure> {
        self.note_heard(source);
        let mut data = AlignedBytes::zeroed(size);
        if size <= WHOLE_ON_ARRIVAL {
            // SAFETY: a matched message and a buffer of exactly its size.
            unsafe { pending::receive_matched_now(message, &mut data) }.map_err(Failure::failed)?;
            return Ok(data);
        }
        match self.receive_into(source, message, &mut data, "receiving a message") {
            Ok(()) => Ok(data),
            Err(failure) => {
                if failure.buffer_in_use {
                    // MPI may still write it: left to MPI for good.
                    std::mem::forget(data);
                }
                Err(failure)
            }
        }
    }

    /// Receives a matched message of exactly `buffer.len()` bytes into `buffer`, within
    /// the liveness rule. On failure MPI may still write `buffer` when the failure says
    /// so (`buffer_in_use`): the caller then leaves it to MPI.
    fn receive_into(
        &self,
        source: i32,
        message: mpi::ffi::MPI_Message,
        buffer: &mut [u8],
        what: &str,
    ) -> Result<(), Failure> {
        // SAFETY: `buffer` outlives the request: completed, or abandoned and reported
        // as possibly still written (see above).
        let request =
            unsafe { Pending::receive_matched(message, buffer) }.map_err(Failure::failed)?;
        self.wait_all(source, &mut vec![request], what, self.timeout)
            .map(|_| ())
    }

    /// Sends `data` to `dest`, waiting until MPI is done with it (under the liveness
    /// rule).
    pub fn send(&self, dest: i32, tag: i32, data: &[u8]) -> Result<(), Failure> {
        self.send_fragments(dest, tag, data, data.len().max(1))
    }

    /// As `send`, but giving up after `within` whatever the peer says (a last word to
    /// a peer that may be gone).
    pub fn send_within(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        within: Duration,
    ) -> Result<(), Failure> {
        self.post_sends(dest, tag, data, data.len().max(1), within)
    }

    /// Receives the next message of `source` with `tag`, waiting as `wait` says.
    pub fn receive(&self, source: i32, tag: i32, wait: Wait) -> Result<AlignedBytes, Failure> {
        let (message, size) = self.wait_message(source, tag, wait)?;
        self.receive_matched(source, message, size)
    }

    /// Waits as `wait` says for the next message of `source` with `tag` and matches it:
    /// (its handle, its size). Under `Live`, the peer's heartbeats are taken meanwhile.
    fn wait_message(
        &self,
        source: i32,
        tag: i32,
        wait: Wait,
    ) -> Result<(mpi::ffi::MPI_Message, usize), Failure> {
        self.check_rank(source)?;
        let comm = self.comm(tag);
        if let Wait::Forever = wait {
            // Nothing to watch while no request comes. Polled, not MPI's blocking probe
            // (which spins on the core for ever): see `IdleSpin`.
            let mut idle = IdleSpin::default();
            loop {
                if let Some(matched) = pending::probe(comm, source, tag).map_err(Failure::failed)? {
                    self.note_heard(source);
                    return Ok(matched);
                }
                idle.pause();
            }
        }
        if let Some(matched) = pending::probe(comm, source, tag).map_err(Failure::failed)? {
            self.note_heard(source);
            return Ok(matched);
        }
        let started = Instant::now();
        let mut looked = Instant::now();
        let mut backoff = Backoff::new();
        // The first look failed above: each round pauses, then looks again.
        loop {
            // The clock is read now and then while spinning (it costs as much as a poll).
            if backoff.time_to_look() {
                let waited = started.elapsed();
                let (late, limit) = match wait {
                    Wait::Within(limit) => (waited >= limit, limit),
                    _ => {
                        if looked.elapsed() >= LOOK {
                            self.take_heartbeats(source);
                            looked = Instant::now();
                        }
                        (
                            waited.min(self.silence(source)) > self.timeout,
                            self.timeout,
                        )
                    }
                };
                if late {
                    return Err(Failure {
                        kind: FailureKind::Silent,
                        text: format!(
                            "no message and no sign of life for {:.1} s",
                            limit.as_secs_f64()
                        ),
                        buffer_in_use: false,
                    });
                }
                self.stall_hook();
            }
            backoff.pause();
            if let Some(matched) = pending::probe(comm, source, tag).map_err(Failure::failed)? {
                self.note_heard(source);
                return Ok(matched);
            }
        }
    }

    /// As `receive_fragments`, for a peer whose word is not trusted (a server receiving
    /// from the application or another server): each fragment is matched first and its
    /// size checked, and only a fragment of the expected size is received into
    /// `buffer`. MPI must never be handed a message longer than its buffer: OpenMPI 4.1
    /// then writes the whole message, past the buffer's end (the request fuzzer found a
    /// heap overflow that way). Any other fragment is received aside and fails the
    /// transfer (an empty one as `GaveUp`).
    pub fn receive_fragments_checked(
        &self,
        source: i32,
        tag: i32,
        buffer: &mut [u8],
        fragment: usize,
    ) -> Result<(), Failure> {
        let step = fragment.clamp(1, i32::MAX as usize);
        let total = buffer.len();
        for (index, piece) in buffer.chunks_mut(step).enumerate() {
            let (message, size) =
                self.wait_message(source, tag, Wait::Live)
                    .map_err(|e| Failure {
                        text: format!(
                            "receiving data stalled at {} of {total} bytes: {e}",
                            index * step
                        ),
                        ..e
                    })?;
            if size == piece.len() {
                self.receive_into(source, message, piece, "receiving data")?;
                continue;
            }
            // Received aside when no longer than a fragment may be; a longer one is left
            // unreceived (MPI keeps it; nothing touches our memory).
            let mut aside = Vec::new();
            if size <= step && aside.try_reserve_exact(size).is_ok() {
                aside.resize(size, 0);
                let received = self.receive_into(source, message, &mut aside, "receiving data");
                if received.is_err_and(|e| e.buffer_in_use) {
                    std::mem::forget(aside);
                }
            }
            return Err(fragment_mismatch(index, size, piece.len()));
        }
        Ok(())
    }

    /// Receives a transfer of `buffer.len()` bytes from `source`, cut in fragments of
    /// `fragment` bytes (the last may be shorter), `IN_FLIGHT` fragments' receives posted
    /// at a time: MPI moves them back to back into place, and each batch's completions
    /// are the transfer's progress (the liveness rule sees them; with every fragment
    /// posted at once, a slow link finishes them all together at the end, and a long
    /// transfer looked stalled). A shorter fragment (an empty one: the sender gave up)
    /// ends the transfer with `GaveUp`; what was not received is cancelled.
    pub fn receive_fragments(
        &self,
        source: i32,
        tag: i32,
        buffer: &mut [u8],
        fragment: usize,
    ) -> Result<(), Failure> {
        self.check_rank(source)?;
        let comm = self.comm(tag);
        let step = fragment.clamp(1, i32::MAX as usize);
        if buffer.is_empty() {
            // SAFETY: an empty buffer; nothing is written.
            let request =
                unsafe { Pending::receive(comm, source, tag, buffer) }.map_err(Failure::failed)?;
            return self
                .wait_all(source, &mut vec![request], "receiving data", self.timeout)
                .and_then(|lengths| match lengths[0] {
                    0 => Ok(()),
                    got => Err(fragment_mismatch(0, got, 0)),
                });
        }
        let mut index = 0;
        for batch in buffer.chunks_mut(step * IN_FLIGHT) {
            let mut requests = Vec::with_capacity(IN_FLIGHT);
            let posted = batch.chunks_mut(step).try_for_each(|piece| {
                // SAFETY: each piece is a distinct part of the caller's buffer, which
                // outlives the requests (completed or abandoned before returning).
                unsafe { Pending::receive(comm, source, tag, piece) }.map(|r| requests.push(r))
            });
            if let Err(e) = posted {
                let in_use = abandon(requests);
                return Err(Failure {
                    buffer_in_use: in_use,
                    ..Failure::failed(e)
                });
            }
            let lengths = self.wait_all(source, &mut requests, "receiving data", self.timeout)?;
            for (got, piece) in lengths.iter().zip(batch.chunks(step)) {
                if *got != piece.len() {
                    return Err(fragment_mismatch(index, *got, piece.len()).with_start(piece));
                }
                index += 1;
            }
        }
        Ok(())
    }

    /// Sends `data` to `dest` in fragments of `fragment` bytes, every send posted at
    /// once, and waits (under the liveness rule) until MPI is done with them.
    pub fn send_fragments(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        fragment: usize,
    ) -> Result<(), Failure> {
        self.post_sends(dest, tag, data, fragment, self.timeout)
    }

    /// Posts the sends of `send_fragments` and waits for them within `limit` of silence.
    fn post_sends(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        fragment: usize,
        limit: Duration,
    ) -> Result<(), Failure> {
        self.check_rank(dest)?;
        self.stall_hook();
        let comm = self.comm(tag);
        let step = fragment.clamp(1, i32::MAX as usize);
        if data.len() <= step {
            // One message, most often a short one that MPI sends at once: no lists.
            // SAFETY: as below.
            let mut request =
                unsafe { Pending::send(comm, dest, tag, data) }.map_err(Failure::failed)?;
            if let Ok(Some(_)) = request.test() {
                return Ok(());
            }
            // (A failed test fails again in the wait, which abandons the request.)
            return self
                .wait_all(dest, &mut vec![request], "sending data", limit)
                .map(|_| ());
        }
        // `IN_FLIGHT` fragments at a time (see `receive_fragments`).
        for batch in data.chunks(step * IN_FLIGHT) {
            let mut requests = Vec::with_capacity(IN_FLIGHT);
            for piece in batch.chunks(step) {
                // SAFETY: the caller's data outlives the requests (completed, or
                // abandoned and reported as possibly still read).
                match unsafe { Pending::send(comm, dest, tag, piece) } {
                    Ok(r) => requests.push(r),
                    Err(e) => {
                        abandon(requests);
                        return Err(Failure {
                            buffer_in_use: true,
                            ..Failure::failed(e)
                        });
                    }
                }
            }
            self.wait_all(dest, &mut requests, "sending data", limit)?;
        }
        Ok(())
    }

    /// Waits until every request completed, under the liveness rule: it fails once
    /// `peer` has made no progress (no request completed) and given no sign of life for
    /// `limit`, abandoning what is open. A receive that came short ends the wait
    /// (its sender gave up: nothing more comes in step), the rest cancelled. Answers the
    /// bytes each moved.
    pub(crate) fn wait_all(
        &self,
        peer: i32,
        requests: &mut Vec<Pending>,
        what: &str,
        limit: Duration,
    ) -> Result<Vec<usize>, Failure> {
        // Most small messages are done at the first look: no clock is read for them.
        let Polled {
            mut open,
            mut short,
            ..
        } = self.poll(peer, requests, what)?;
        if open == 0 {
            return Ok(requests.iter().map(|r| r.moved().unwrap_or(0)).collect());
        }
        let total: usize = requests.iter().map(Pending::posted).sum();
        let mut progress = Instant::now();
        let mut looked = Instant::now();
        let mut backoff = Backoff::for_transfer(total);
        loop {
            let lengths = || requests.iter().map(|r| r.moved().unwrap_or(0)).collect();
            if open == 0 {
                return Ok(lengths());
            }
            if short {
                let moved = lengths();
                abandon(std::mem::take(requests));
                return Ok(moved);
            }
            // The clock is read now and then while spinning (it costs as much as a poll).
            if backoff.time_to_look() {
                if looked.elapsed() >= LOOK {
                    self.take_heartbeats(peer);
                    looked = Instant::now();
                }
                let waited = progress.elapsed();
                let silent = if waited > limit {
                    waited.min(self.silence(peer))
                } else {
                    waited
                };
                if silent > limit {
                    let moved: usize = requests.iter().filter_map(Pending::moved).sum();
                    let in_use = abandon(std::mem::take(requests));
                    return Err(Failure {
                        kind: FailureKind::Silent,
                        text: format!(
                            "{what} stalled: no progress and no sign of life for {:.1} s (OFFLOAD_MPI_TIMEOUT) after {moved} of {total} bytes",
                            silent.as_secs_f64()
                        ),
                        buffer_in_use: in_use,
                    });
                }
                self.stall_hook();
            }
            backoff.pause();
            let polled = self.poll(peer, requests, what)?;
            (open, short) = (polled.open, polled.short);
            if polled.completed > 0 {
                progress = Instant::now();
            }
        }
    }

    /// Tests every open request once. A completed receive is a sign of the peer's life;
    /// a failing test abandons them all.
    pub(crate) fn poll(
        &self,
        peer: i32,
        requests: &mut Vec<Pending>,
        what: &str,
    ) -> Result<Polled, Failure> {
        let mut polled = Polled::default();
        for request in requests.iter_mut() {
            if request.is_done() {
                continue;
            }
            match request.test() {
                Ok(Some(moved)) => {
                    // A receive is the peer's word; a send may be complete in MPI
                    // alone (a small message), which says nothing of the peer.
                    if request.is_receive() {
                        self.note_heard(peer);
                    }
                    polled.completed += 1;
                    polled.short |= moved < request.posted();
                }
                Ok(None) => polled.open += 1,
                Err(e) => {
                    let in_use = abandon(std::mem::take(requests));
                    return Err(Failure {
                        buffer_in_use: in_use,
                        ..Failure::failed(format!("{what}: {e}"))
                    });
                }
            }
        }
        Ok(polled)
    }

    pub(crate) fn stall_hook(&self) {
        if let Some(stall) = self.stall {
            stall();
        }
    }

    pub(crate) fn check_rank(&self, rank: i32) -> Result<(), Failure> {
        if (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(Failure::failed(format!(
                "rank {rank} does not exist (world of {})",
                self.size()
            )))
        }
    }
}

/// Makes MPI's failures on `comm` come back as error codes (which every call checks)
/// instead of aborting the process, MPI's default: a peer's malformed or oversized
/// message, or a dead peer on a network, is an error to report, not an end.
fn returning_errors(comm: &SimpleCommunicator) {
    /// The handler: nothing to do; the failing call returns its code.
    unsafe extern "C" fn ignore(_comm: *mut ffi::MPI_Comm, _code: *mut std::ffi::c_int) {}
    // SAFETY: MPI calls the handler as `(MPI_Comm *, int *, ...)`; a function taking
    // the two named arguments and ignoring the rest is compatible with that call on
    // the C ABIs we build for (the extra arguments are never read).
    let handler: ffi::MPI_Comm_errhandler_function = unsafe {
        std::mem::transmute::<
            unsafe extern "C" fn(*mut ffi::MPI_Comm, *mut std::ffi::c_int),
            ffi::MPI_Comm_errhandler_function,
        >(ignore)
    };
    // SAFETY: plain data MPI fills in.
    let mut errhandler: ffi::MPI_Errhandler = unsafe { std::mem::zeroed() };
    // SAFETY: a valid handler function and a writable handle; then our communicator.
    unsafe {
        if ffi::MPI_Comm_create_errhandler(handler, &mut errhandler) == 0 {
            ffi::MPI_Comm_set_errhandler(comm.as_raw(), errhandler);
        }
    }
}

/// What one poll of a wait's requests found.
#[derive(Default)]
pub(crate) struct Polled {
    /// Still open.
    pub open: usize,
    /// Completed by this poll.
    pub completed: usize,
    /// A receive came shorter than posted (its sender gave up).
    pub short: bool,
}

/// What a fragment of `got` bytes where `want` were expected means: an empty one is
/// the sender giving up (still in step); any other size is a failure.
fn fragment_mismatch(index: usize, got: usize, want: usize) -> Failure {
    if got == 0 {
        return Failure {
            kind: FailureKind::GaveUp,
            text: format!("the sender stopped sending (its side failed) at fragment {index}"),
            buffer_in_use: false,
        };
    }
    Failure::failed(format!(
        "a fragment of {got} bytes came where {want} were expected (fragment {index})"
    ))
}

impl Failure {
    /// A mismatched fragment's first bytes as they landed, to tell data that came cut
    /// differently from another message that took its place.
    fn with_start(mut self, landed: &[u8]) -> Failure {
        if !landed.is_empty() && self.kind != FailureKind::GaveUp {
            let shown = &landed[..landed.len().min(8)];
            let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
            self.text += &format!("; it begins {}", hex.join(" "));
        }
        self
    }
}

/// Abandons every request still open: whether MPI may still touch a buffer.
/// Fragments of one transfer in flight at a time: enough to keep a link busy (the next
/// batch is posted as soon as one ends), few enough that each completes on its own.
const IN_FLIGHT: usize = 2;

fn abandon(requests: Vec<Pending>) -> bool {
    requests
        .into_iter()
        .map(Pending::abandon)
        .fold(false, |in_use, a| in_use | (a == Abandoned::StillInUse))
}

/// How a wait polls: most answers come within microseconds, so it first spins (the
/// other side runs on another core; a yield is a system call that delays the answer's
/// pickup by microseconds), then polls yielding the core up to 200 us (longer for a
/// transfer: `POLLED_BYTES_PER_US`), then sleeps, backing off to 1 ms, so that long
/// waits cost no CPU.
struct Backoff {
    start: Instant,
    polls: u32,
    yielding: Duration,
    sleep: Duration,
}

/// How many polls spin before the first yield (some tens of microseconds).
const SPIN_POLLS: u32 = 256;
/// While spinning, the clock is read at one poll in this many.
pub(crate) const LOOK_EVERY: u32 = 32;

/// `rank`'s entry of a per-rank table (none for a rank outside the world).
fn of_rank(per_rank: &[AtomicU64], rank: i32) -> Option<&AtomicU64> {
    usize::try_from(rank).ok().and_then(|r| per_rank.get(r))
}

/// How long a wait on a transfer of `bytes` polls before it sleeps.
fn transfer_polling(bytes: usize) -> Duration {
    SPIN + Duration::from_micros(bytes as u64 / POLLED_BYTES_PER_US)
}

/// How a server spins while it waits for the next request, which may come at any
/// moment: a moment of pure spinning, then every look yields the core first. A server's
/// threads share the core `mpirun` binds it to, so the threads running its kernels and
/// answering queue syncs get it at once instead of after the scheduler's time slice
/// (with MPI's blocking probe, which never yields, every `olSyncQueue` of a remote
/// queue took about 4 ms). A yield with nothing else to run returns at once.
#[derive(Default)]
pub(crate) struct IdleSpin {
    polls: u32,
}

impl IdleSpin {
    pub(crate) fn pause(&mut self) {
        if self.polls < SPIN_POLLS {
            self.polls += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            start: Instant::now(),
            polls: 0,
            yielding: SPIN,
            sleep: Duration::from_micros(50),
        }
    }

    /// For a wait on `bytes` moving: it sleeps only once they are overdue.
    fn for_transfer(bytes: usize) -> Self {
        Backoff {
            yielding: transfer_polling(bytes),
            ..Backoff::new()
        }
    }

    /// Whether this poll should read the clock (deadlines, heartbeats): every
    /// `LOOK_EVERY` polls while spinning, at every poll once the wait sleeps.
    fn time_to_look(&self) -> bool {
        self.polls >= SPIN_POLLS || self.polls % LOOK_EVERY == 0
    }

    fn pause(&mut self) {
        self.polls = self.polls.saturating_add(1);
        if self.polls < SPIN_POLLS {
            std::hint::spin_loop();
        } else if self.start.elapsed() < self.yielding {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_is_polled_for_as_long_as_its_bytes_take_at_the_polled_rate() {
        assert_eq!(transfer_polling(0), SPIN);
        assert_eq!(
            transfer_polling(1 << 20),
            SPIN + Duration::from_micros((1 << 20) / POLLED_BYTES_PER_US)
        );
        // Fragments of up to 2 GiB, two in flight: no overflow, about 43 s.
        let two_fragments = 2 * i32::MAX as usize;
        assert!(transfer_polling(two_fragments) < Duration::from_secs(60));
    }

    #[test]
    fn a_wait_sleeps_once_its_polling_time_is_over() {
        assert_eq!(
            Backoff::for_transfer(1 << 20).yielding,
            transfer_polling(1 << 20)
        );
        assert_eq!(Backoff::new().yielding, SPIN);
        let mut waited = Backoff::for_transfer(1 << 20);
        waited.start -= transfer_polling(1 << 20);
        for _ in 0..SPIN_POLLS + 2 {
            waited.pause();
        }
        assert!(
            waited.sleep > Duration::from_micros(50),
            "past its polling time, a wait sleeps (and backs off)"
        );
    }
}
