//! Events: points in a queue. An event completes when every command enqueued on its
//! queue before it is done; queues that wait on it are woken then.

use crate::runtime::error::{Error, Result};
use crate::runtime::platform::Device;
use crate::runtime::queue::{Queue, SYNC_SPIN};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::Instant;

/// `ol_event_info_t`, in the header's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventInfo {
    Queue = 0,
    IsComplete = 1,
}

impl TryFrom<u32> for EventInfo {
    type Error = u32;
    fn try_from(v: u32) -> std::result::Result<Self, u32> {
        match v {
            0 => Ok(EventInfo::Queue),
            1 => Ok(EventInfo::IsComplete),
            _ => Err(v),
        }
    }
}

#[derive(Default)]
struct EventState {
    completed_at: Option<Instant>,
    /// The error of the queue when the event was reached, if any.
    error: Option<Error>,
    /// Queues blocked on this event, woken on completion.
    waiters: Vec<Arc<Queue>>,
}

pub struct Event {
    /// The handle of the queue the event was created on (kept after that queue is gone).
    pub queue_handle: usize,
    pub device: Arc<Device>,
    state: Mutex<EventState>,
    done: Condvar,
}

impl Event {
    pub fn new(queue_handle: usize, device: Arc<Device>) -> Self {
        Event {
            queue_handle,
            device,
            state: Mutex::new(EventState::default()),
            done: Condvar::new(),
        }
    }

    /// Marks the event reached, wakes the threads and queues waiting on it.
    pub(crate) fn complete(&self, error: Option<Error>) {
        let waiters = {
            let mut s = self.state.lock();
            s.completed_at = Some(Instant::now());
            s.error = error;
            std::mem::take(&mut s.waiters)
        };
        self.done.notify_all();
        for queue in waiters {
            queue.wake();
        }
    }

    pub fn is_complete(&self) -> bool {
        self.state.lock().completed_at.is_some()
    }

    /// If the event is still pending, remembers `queue` to wake on completion and returns
    /// true; returns false if it is complete already.
    pub(crate) fn add_waiter_if_pending(&self, queue: &Arc<Queue>) -> bool {
        let mut s = self.state.lock();
        if s.completed_at.is_some() {
            return false;
        }
        s.waiters.push(queue.clone());
        true
    }

    /// Blocks until the event completes; returns the error its queue had by then.
    pub fn sync(&self) -> Result<Instant> {
        let mut s = self.state.lock();
        let spin_until = Instant::now() + SYNC_SPIN;
        while s.completed_at.is_none() {
            // Work just ahead of the event ends sooner than a sleeping thread is woken.
            if Instant::now() < spin_until {
                drop(s);
                std::hint::spin_loop();
                s = self.state.lock();
            } else {
                self.done.wait(&mut s);
            }
        }
        match &s.error {
            Some(e) => Err(e.clone()),
            None => Ok(s.completed_at.unwrap_or_else(Instant::now)),
        }
    }

    /// Milliseconds from `start` completing to `end` completing (negative if `end` came
    /// first); waits for both.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        let t0 = start.completion_time();
        let t1 = end.completion_time();
        Ok(if t1 >= t0 {
            t1.duration_since(t0).as_secs_f64() as f32 * 1000.0
        } else {
            -(t0.duration_since(t1).as_secs_f64() as f32 * 1000.0)
        })
    }

    fn completion_time(&self) -> Instant {
        let mut s = self.state.lock();
        while s.completed_at.is_none() {
            self.done.wait(&mut s);
        }
        s.completed_at.unwrap_or_else(Instant::now)
    }
}
