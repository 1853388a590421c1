//! Sends that go on while their sender does other work: a server posts its reply and
//! serves the next request, the reply completing meanwhile. Waiting for each reply to
//! complete before the next request cost a 4 KiB read about a microsecond (the
//! application's acknowledgement of a rendezvous-sized reply is on that path);
//! the deadlines still hold: while a reply is open, the wait for the next request is
//! under the liveness rule for it.

use crate::aligned_bytes::AlignedBytes;
use crate::pending::{self, Abandoned, Pending};
use crate::transport::{Failure, FailureKind, IdleSpin, Transport, Wait, LOOK_EVERY};
use std::time::Instant;

/// Sends posted and not known complete, each with the bytes it sends, held until MPI is
/// done with them (or left to MPI for good when a send is abandoned).
#[derive(Default)]
pub struct InFlight {
    requests: Vec<Pending>,
    buffers: Vec<Box<dyn AsRef<[u8]> + Send>>,
}

impl InFlight {
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Forgets the sends after a failure that abandoned them: their bytes are left to
    /// MPI when it may still read them.
    fn drop_after(&mut self, failure: &Failure) {
        self.requests.clear();
        let buffers = std::mem::take(&mut self.buffers);
        if failure.buffer_in_use {
            std::mem::forget(buffers);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        for (request, buffer) in self.requests.drain(..).zip(self.buffers.drain(..)) {
            if request.abandon() == Abandoned::StillInUse {
                std::mem::forget(buffer);
            }
        }
    }
}

impl Transport {
    /// Posts `data` to `dest` and returns at once; the send stays in `in_flight` until
    /// `receive_sending` or `finish` sees it complete.
    pub fn post(
        &self,
        dest: i32,
        tag: i32,
        data: impl AsRef<[u8]> + Send + 'static,
        in_flight: &mut InFlight,
    ) -> Result<(), Failure> {
        self.check_rank(dest)?;
        self.stall_hook();
        // SAFETY: the bytes move into `in_flight` (their heap buffer stays where it is),
        // which holds them until MPI is done or leaves them to MPI.
        let mut request = unsafe { Pending::send(self.comm(tag), dest, tag, data.as_ref()) }
            .map_err(Failure::failed)?;
        // A short reply is sent at once (MPI's eager protocol): nothing to keep.
        if request.test().map_err(Failure::failed)?.is_some() {
            return Ok(());
        }
        in_flight.requests.push(request);
        in_flight.buffers.push(Box::new(data));
        Ok(())
    }

    /// Tests the open sends once, dropping those that completed: whether any did.
    fn settle(&self, peer: i32, in_flight: &mut InFlight) -> Result<bool, Failure> {
        let polled = self
            .poll(peer, &mut in_flight.requests, "sending a reply")
            .inspect_err(|f| in_flight.drop_after(f))?;
        if polled.completed == 0 {
            return Ok(false);
        }
        let mut i = 0;
        while i < in_flight.requests.len() {
            if in_flight.requests[i].is_done() {
                in_flight.requests.swap_remove(i);
                in_flight.buffers.swap_remove(i);
            } else {
                i += 1;
            }
        }
        Ok(true)
    }

    /// Waits for the next message of `source` with `tag` as `Wait::Forever` does,
    /// completing the sends in `in_flight` to `source` meanwhile; while any is open, the
    /// wait is under the liveness rule for it. `Err`: a send was not taken (or MPI
    /// failed); `Ok(Err)`: the message did not come whole.
    pub fn receive_sending(
        &self,
        source: i32,
        tag: i32,
        in_flight: &mut InFlight,
    ) -> Result<Result<AlignedBytes, Failure>, Failure> {
        self.check_rank(source)?;
        let comm = self.comm(tag);
        let mut progress = Instant::now();
        let mut polls: u32 = 0;
        let mut idle = IdleSpin::default();
        loop {
            if self.settle(source, in_flight)? {
                progress = Instant::now();
            }
            if in_flight.is_empty() {
                return Ok(self.receive(source, tag, Wait::Forever));
            }
            if let Some((message, size)) =
                pending::probe(comm, source, tag).map_err(Failure::failed)?
            {
                return Ok(self.receive_matched(source, message, size));
            }
            polls = polls.wrapping_add(1);
            if polls % LOOK_EVERY == 0 {
                // (The application sends no heartbeats: its requests are its signs.)
                let silent = progress.elapsed().min(self.silence(source));
                if silent > self.timeout() {
                    let failure = Failure {
                        kind: FailureKind::Silent,
                        text: format!(
                            "{} replies not taken: no progress and no sign of life for {:.1} s (OFFLOAD_MPI_TIMEOUT)",
                            in_flight.len(),
                            silent.as_secs_f64()
                        ),
                        buffer_in_use: true,
                    };
                    // Dropping them abandons them (their bytes left to MPI if need be).
                    *in_flight = InFlight::default();
                    return Err(failure);
                }
                self.stall_hook();
            }
            // A reply is taken within microseconds, and so comes the next request: no
            // sleep, but the core is yielded after a moment (see `IdleSpin`).
            idle.pause();
        }
    }

    /// Waits until every send in `in_flight` completed, under the liveness rule.
    pub fn finish(&self, peer: i32, in_flight: &mut InFlight) -> Result<(), Failure> {
        let timeout = self.timeout();
        match self.wait_all(peer, &mut in_flight.requests, "sending replies", timeout) {
            Ok(_) => {
                in_flight.requests.clear();
                in_flight.buffers.clear();
                Ok(())
            }
            Err(failure) => {
                in_flight.drop_after(&failure);
                Err(failure)
            }
        }
    }
}
