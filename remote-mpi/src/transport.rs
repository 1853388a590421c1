//! Byte messages between ranks of `MPI_COMM_WORLD`.

use mpi::datatype::Equivalence;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Message, Source, Status};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::time::{Duration, Instant};

/// The tag of requests (application to server).
pub const TAG_REQUEST: i32 = 1;
/// The tag of replies (server to application).
pub const TAG_REPLY: i32 = 2;
/// The tag of bulk data (copies and images), in fragments.
pub const TAG_DATA: i32 = 3;
/// The tag of a busy server's "still working" messages (empty), every `HEARTBEAT`.
pub const TAG_HEARTBEAT: i32 = 4;
/// How often a busy server says it is alive.
pub const HEARTBEAT: Duration = Duration::from_millis(500);

/// What a receive with a deadline that ran out says (the C functions answer -2 for it).
pub const TIMED_OUT: &str = "did not answer within";

/// How long a receive with a deadline polls before it starts to sleep.
const SPIN: Duration = Duration::from_micros(200);

/// MPI, initialised by us with every thread allowed to call it.
pub struct Transport {
    _universe: Universe,
    world: SimpleCommunicator,
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
        Ok(Transport {
            _universe: universe,
            world,
        })
    }

    pub fn rank(&self) -> i32 {
        self.world.rank()
    }

    pub fn size(&self) -> i32 {
        self.world.size()
    }

    /// Sends `data` to `dest` (blocking until MPI holds it).
    pub fn send(&self, dest: i32, tag: i32, data: &[u8]) -> Result<(), String> {
        if !(0..self.size()).contains(&dest) {
            return Err(format!(
                "rank {dest} does not exist (world of {})",
                self.size()
            ));
        }
        self.world.process_at_rank(dest).send_with_tag(data, tag);
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

    /// As `receive`, into `buffer` (no allocation, no extra copy); the message must fit:
    /// returns its length.
    pub fn receive_into(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
        buffer: &mut [u8],
    ) -> Result<usize, String> {
        let (message, status) = self.probe(source, tag, timeout)?;
        let length = usize::try_from(status.count(u8::equivalent_datatype())).unwrap_or(0);
        if length > buffer.len() {
            // Received anyway (a matched message must be), then refused.
            let _ = (message, status).matched_receive_vec::<u8>();
            return Err(format!(
                "a message of {length} bytes from rank {source} where {} were expected",
                buffer.len()
            ));
        }
        message.matched_receive_into(&mut buffer[..length]);
        Ok(length)
    }

    /// Waits for the next message of `source` with `tag` (see `receive`) and matches it.
    fn probe(
        &self,
        source: i32,
        tag: i32,
        timeout: Option<Duration>,
    ) -> Result<(Message, Status), String> {
        if !(0..self.size()).contains(&source) {
            return Err(format!(
                "rank {source} does not exist (world of {})",
                self.size()
            ));
        }
        let process = self.world.process_at_rank(source);
        let Some(timeout) = timeout else {
            return Ok(process.matched_probe_with_tag(tag));
        };
        let start = Instant::now();
        let deadline = start + timeout;
        let mut pause = Duration::from_micros(50);
        loop {
            if let Some(probed) = process.immediate_matched_probe_with_tag(tag) {
                return Ok(probed);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(format!(
                    "rank {source} {TIMED_OUT} {:.1} s",
                    timeout.as_secs_f64()
                ));
            }
            // Most answers come within microseconds: poll (yielding the core) for the
            // first 200 us; then sleep, backing off to 1 ms, so long waits cost no CPU.
            if now - start < SPIN {
                std::thread::yield_now();
            } else {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }
    }
}
