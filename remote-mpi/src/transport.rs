//! Byte messages between ranks of `MPI_COMM_WORLD`.

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::time::{Duration, Instant};

/// The tag of requests (application to server).
pub const TAG_REQUEST: i32 = 1;
/// The tag of replies (server to application).
pub const TAG_REPLY: i32 = 2;
/// The tag of bulk data (copies and images), in fragments.
pub const TAG_DATA: i32 = 3;

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
        if !(0..self.size()).contains(&source) {
            return Err(format!(
                "rank {source} does not exist (world of {})",
                self.size()
            ));
        }
        let process = self.world.process_at_rank(source);
        let Some(timeout) = timeout else {
            return Ok(process
                .matched_probe_with_tag(tag)
                .matched_receive_vec::<u8>()
                .0);
        };
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(1);
        loop {
            if let Some(probed) = process.immediate_matched_probe_with_tag(tag) {
                return Ok(probed.matched_receive_vec::<u8>().0);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "rank {source} did not answer within {:.1} s",
                    timeout.as_secs_f64()
                ));
            }
            std::thread::sleep(pause);
            // Back off to 1 ms: quick answers stay quick, long waits cost no CPU.
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}
