//! The application's progress engine for long waits: one thread takes the replies that
//! parked exchanges expect, and the heartbeats of their servers, so that threads waiting
//! for remote work (a queue syncing a long kernel, many queues at once) sleep instead of
//! each polling MPI. Short waits never come here: a waiting thread first polls for a
//! moment itself (most replies come within microseconds, and a hand-over costs more).

use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::Duration;

/// Where a parked exchange's reply (or why none can come) is left for its thread.
#[derive(Default)]
pub struct Slot {
    reply: Mutex<Option<Result<Vec<u8>, String>>>,
    ready: Condvar,
}

impl Slot {
    pub fn fill(&self, reply: Result<Vec<u8>, String>) {
        *self.reply.lock() = Some(reply);
        self.ready.notify_all();
    }

    /// The reply, if it came within `within`.
    pub fn wait(&self, within: Duration) -> Option<Result<Vec<u8>, String>> {
        let mut reply = self.reply.lock();
        if reply.is_none() {
            self.ready.wait_for(&mut reply, within);
        }
        reply.take()
    }
}

/// One exchange waiting for its reply.
#[derive(Clone)]
pub struct Parked {
    pub rank: i32,
    pub tag: i32,
    pub slot: Arc<Slot>,
}

/// The exchanges waiting, and the engine thread's wake-up.
pub struct Engine {
    parked: Mutex<Vec<Parked>>,
    work: Condvar,
    started: std::sync::Once,
    /// Set by the engine thread once it runs: a thread spawned inside `dlopen` (a
    /// library's constructor reaching liboffload) cannot begin before the loader's lock
    /// is let go, and a wait handed to it meanwhile would only end in its timeout.
    running: std::sync::atomic::AtomicBool,
}

impl Default for Engine {
    fn default() -> Self {
        Engine {
            parked: Mutex::new(Vec::new()),
            work: Condvar::new(),
            started: std::sync::Once::new(),
            running: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Engine {
    /// Hands the wait for (`rank`, `tag`) to the engine thread (started on first use by
    /// `start`, which runs `poll` for ever).
    pub fn park(&self, rank: i32, tag: i32, start: impl FnOnce()) -> Arc<Slot> {
        self.started.call_once(start);
        let slot = Arc::new(Slot::default());
        self.parked.lock().push(Parked {
            rank,
            tag,
            slot: slot.clone(),
        });
        self.work.notify_one();
        slot
    }

    /// Starts the engine thread (once) and says whether it runs yet: until it does,
    /// waiting threads take their replies themselves.
    pub fn start(&self, start: impl FnOnce()) -> bool {
        self.started.call_once(start);
        self.running.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Takes the wait back (its thread gave up on it).
    pub fn unpark(&self, slot: &Arc<Slot>) {
        self.parked.lock().retain(|p| !Arc::ptr_eq(&p.slot, slot));
    }

    /// The engine thread's loop: `take` looks for one parked exchange's reply (`None`:
    /// not yet). Polls back off from 20 us to 500 us while nothing comes; with nothing
    /// parked the thread sleeps until something is. (The waiting threads take their
    /// servers' heartbeats when they look at their silence.)
    pub fn poll(&self, take: impl Fn(&Parked) -> Option<Result<Vec<u8>, String>>) -> ! {
        self.running
            .store(true, std::sync::atomic::Ordering::Release);
        let mut pause = Duration::from_micros(20);
        loop {
            let waiting: Vec<Parked> = {
                let mut parked = self.parked.lock();
                while parked.is_empty() {
                    self.work.wait(&mut parked);
                }
                parked.clone()
            };
            let mut delivered = false;
            for p in &waiting {
                if let Some(reply) = take(p) {
                    self.unpark(&p.slot);
                    p.slot.fill(reply);
                    delivered = true;
                }
            }
            if delivered {
                pause = Duration::from_micros(20);
            } else {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_micros(500));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_wait_gets_its_reply_from_the_engine_thread() {
        let engine = Arc::new(Engine::default());
        let runner = engine.clone();
        let arrived = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = arrived.clone();
        let slot = engine.park(1, 99, move || {
            std::thread::spawn(move || {
                runner.poll(|p| {
                    (p.tag == 99 && seen.load(std::sync::atomic::Ordering::Acquire))
                        .then(|| Ok(vec![p.rank as u8]))
                })
            });
        });
        assert!(
            slot.wait(Duration::from_millis(20)).is_none(),
            "nothing yet"
        );
        arrived.store(true, std::sync::atomic::Ordering::Release);
        let reply = slot.wait(Duration::from_secs(5)).expect("delivered");
        assert_eq!(reply, Ok(vec![1]));
        assert!(engine.parked.lock().is_empty(), "delivered waits leave");
        // A wait given up leaves too.
        let other = engine.park(2, 100, || {});
        engine.unpark(&other);
        assert!(engine.parked.lock().is_empty());
    }
}
