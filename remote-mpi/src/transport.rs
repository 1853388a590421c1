//! Byte messages between ranks of `MPI_COMM_WORLD`.

use mpi::datatype::Equivalence;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Message, Source, Status};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::time::{Duration, Instant};

/// The tag of requests (application to server). Each request carries the tag of its
/// exchange (from `FIRST_OPERATION_TAG` on), which the data and the reply of that
/// exchange travel with.
pub const TAG_REQUEST: i32 = 1;
/// The tag of a busy server's "still working" messages (empty), every `HEARTBEAT`.
pub const TAG_HEARTBEAT: i32 = 4;
/// The first tag of exchanges (the application's side counts them).
pub const FIRST_OPERATION_TAG: i32 = 16;
/// How often a busy server says it is alive.
pub const HEARTBEAT: Duration = Duration::from_millis(500);

/// What a receive with a deadline that ran out says (the C functions answer -2 for it).
pub const TIMED_OUT: &str = "did not answer within";
/// What a transfer whose sender gave up midway says (the C functions answer -3 for it).
pub const GAVE_UP: &str = "stopped sending";

/// How long a wait polls (spinning, then yielding) before it starts to sleep.
const SPIN: Duration = Duration::from_micros(200);

/// How many communicators the exchanges are spread over (by tag).
const CHANNELS: usize = 4;

/// MPI, initialised by us with every thread allowed to call it.
pub struct Transport {
    /// Copies of the world communicator: an exchange's data and reply go on the one its
    /// tag picks, so that threads busy with different exchanges seldom meet in one
    /// communicator's matching (MPI libraries lock each communicator's queues). Freed
    /// before MPI is finalised (fields drop in this order).
    channels: Vec<SimpleCommunicator>,
    world: SimpleCommunicator,
    _universe: Universe,
}

// SAFETY: MPI was initialised with MPI_THREAD_MULTIPLE (`open` refuses anything less),
// so its handles may be used from any thread.
unsafe impl Send for Transport {}
// SAFETY: as above.
unsafe impl Sync for Transport {}

impl Transport {
    /// Initialises MPI. Refused when MPI is initialised already (the application's own
    /// MPI use is not shared yet) or cannot give `MPI_THREAD_MULTIPLE`.
    pub fn open() -> Result<Transport, String> {
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
        // Collective: every rank (servers and application) makes them when it opens.
        let channels = (0..CHANNELS).map(|_| world.duplicate()).collect();
        Ok(Transport {
            channels,
            world,
            _universe: universe,
        })
    }

    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    pub fn size(&self) -> i32 {
        self.world.size()
    }

    /// The communicator of messages with `tag`: the world for requests and heartbeats,
    /// one of the channels for an exchange's data and reply.
    fn comm(&self, tag: i32) -> &SimpleCommunicator {
        match usize::try_from(tag - FIRST_OPERATION_TAG) {
            Ok(n) if !self.channels.is_empty() => &self.channels[n % self.channels.len()],
            _ => &self.world,
        }
    }

    /// Sends `data` to `dest` (blocking until MPI holds it).
    pub fn send(&self, dest: i32, tag: i32, data: &[u8]) -> Result<(), String> {
        self.check_rank(dest)?;
        self.comm(tag)
            .process_at_rank(dest)
            .send_with_tag(data, tag);
        Ok(())
    }

    /// Receives the next message of `source` with `tag`; `None`: wait for ever (the
    /// server's main loop), else an error once `timeout` passes without one.
    pub fn receive(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, String> {
        Ok(self
            .probe(source, tag, timeout)?
            .matched_receive_vec::<u8>()
            .0)
    }

    /// Receives a transfer of `buffer.len()` bytes from `source`, cut in fragments of
    /// `fragment` bytes (the last may be shorter), with every fragment's receive posted
    /// at once: MPI moves them back to back into place. A shorter fragment (an empty
    /// one: the sender gave up) ends the transfer with an error naming it.
    pub fn receive_fragments(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
        buffer: &mut [u8],
        fragment: usize,
    ) -> Result<(), String> {
        let mut lengths = Vec::new();
        let step = fragment.clamp(1, i32::MAX as usize);
        let expected: Vec<usize> = buffer.chunks(step).map(<[u8]>::len).collect();
        self.receive_pieces(source, tag, timeout, buffer, step, &mut lengths)?;
        for (index, (got, want)) in lengths.iter().zip(&expected).enumerate() {
            match *got {
                n if n == *want => {}
                0 => {
                    return Err(format!(
                        "rank {source} {GAVE_UP} (its side failed) at fragment {index}"
                    ))
                }
                n => {
                    return Err(format!(
                        "rank {source} sent a fragment of {n} bytes where {want} were expected"
                    ))
                }
            }
        }
        Ok(())
    }

    /// Posts a receive for each `step`-byte piece of `buffer` and waits (polling, within
    /// `timeout`) until every one completed, each length going to `lengths`; a short
    /// piece stops the wait (the rest is cancelled: its sender gave up).
    fn receive_pieces(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
        buffer: &mut [u8],
        step: usize,
        lengths: &mut Vec<usize>,
    ) -> Result<(), String> {
        self.check_rank(source)?;
        let process = self.comm(tag).process_at_rank(source);
        let deadline = timeout.map(|t| Instant::now() + t);
        let pieces = buffer.len().div_ceil(step).max(1);
        lengths.clear();
        lengths.resize(pieces, usize::MAX);
        mpi::request::scope(|scope| {
            let mut pending: Vec<Option<_>> = if buffer.is_empty() {
                vec![Some(
                    process.immediate_receive_into_with_tag(scope, buffer, tag),
                )]
            } else {
                buffer
                    .chunks_mut(step)
                    .map(|piece| Some(process.immediate_receive_into_with_tag(scope, piece, tag)))
                    .collect()
            };
            let mut wait = Backoff::new();
            loop {
                let mut open = 0;
                for (index, slot) in pending.iter_mut().enumerate() {
                    let Some(request) = slot.take() else { continue };
                    match request.test() {
                        Ok(status) => {
                            let got = status.count(u8::equivalent_datatype());
                            lengths[index] = usize::try_from(got).unwrap_or(0);
                        }
                        Err(request) => {
                            *slot = Some(request);
                            open += 1;
                        }
                    }
                }
                if open == 0 {
                    return Ok(());
                }
                // A piece before the last that came short: its sender gave up.
                let short = lengths[..pieces - 1].iter().any(|&l| l < step);
                let late = deadline.is_some_and(|d| Instant::now() >= d);
                if short || late {
                    // Nothing more comes (or too late): the open receives are cancelled
                    // so that the buffer is the caller's again.
                    for request in pending.iter_mut().filter_map(Option::take) {
                        request.cancel();
                        request.wait();
                    }
                    if short {
                        lengths.retain(|&l| l != usize::MAX);
                        return Ok(());
                    }
                    return Err(format!(
                        "rank {source} {TIMED_OUT} {:.1} s",
                        timeout.unwrap_or_default().as_secs_f64()
                    ));
                }
                wait.pause();
            }
        })
    }

    /// Sends `data` to `dest` in fragments of `fragment` bytes, every send posted at
    /// once, and waits until MPI is done with them.
    pub fn send_fragments(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        fragment: usize,
    ) -> Result<(), String> {
        self.check_rank(dest)?;
        let process = self.comm(tag).process_at_rank(dest);
        let step = fragment.clamp(1, i32::MAX as usize);
        mpi::request::scope(|scope| {
            let requests: Vec<_> = data
                .chunks(step)
                .map(|piece| process.immediate_send_with_tag(scope, piece, tag))
                .collect();
            for request in requests {
                request.wait();
            }
        });
        Ok(())
    }

    fn check_rank(&self, rank: i32) -> Result<(), String> {
        if (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(format!(
                "rank {rank} does not exist (world of {})",
                self.size()
            ))
        }
    }

    /// Waits for the next message of `source` with `tag` (see `receive`) and matches it.
    fn probe(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
    ) -> Result<(Message, Status), String> {
        self.check_rank(source)?;
        let process = self.comm(tag).process_at_rank(source);
        let Some(timeout) = timeout else {
            return Ok(process.matched_probe_with_tag(tag));
        };
        let deadline = Instant::now() + timeout;
        let mut wait = Backoff::new();
        loop {
            if let Some(probed) = process.immediate_matched_probe_with_tag(tag) {
                return Ok(probed);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "rank {source} {TIMED_OUT} {:.1} s",
                    timeout.as_secs_f64()
                ));
            }
            wait.pause();
        }
    }
}

/// How a wait polls: most answers come within microseconds, so it first spins (the
/// other side runs on another core; a yield is a system call that delays the answer's
/// pickup by microseconds), then polls yielding the core up to 200 us, then sleeps,
/// backing off to 1 ms, so that long waits cost no CPU.
struct Backoff {
    start: Instant,
    polls: u32,
    sleep: Duration,
}

/// How many polls spin before the first yield (some tens of microseconds).
const SPIN_POLLS: u32 = 256;

impl Backoff {
    fn new() -> Self {
        Backoff {
            start: Instant::now(),
            polls: 0,
            sleep: Duration::from_micros(50),
        }
    }

    fn pause(&mut self) {
        self.polls = self.polls.saturating_add(1);
        if self.polls < SPIN_POLLS {
            std::hint::spin_loop();
        } else if self.start.elapsed() < SPIN {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.sleep);
            self.sleep = (self.sleep * 2).min(Duration::from_millis(1));
        }
    }
}
