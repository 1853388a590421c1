//! Events of the host device's streams: a point in a `HostStream`. It completes when
//! every operation enqueued before it is done; streams that wait on it are woken then.

use super::stream::{HostStream, SYNC_SPIN};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{own_event, StreamEvent};
use parking_lot::{Condvar, Mutex};
use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

#[derive(Default)]
struct EventState {
    completed_at: Option<Instant>,
    /// The error of the stream when the event was reached, if any.
    error: Option<Error>,
    /// Streams blocked on this event, woken on completion.
    waiters: Vec<Arc<HostStream>>,
}

#[derive(Default)]
pub struct HostEvent {
    state: Mutex<EventState>,
    done: Condvar,
}

impl HostEvent {
    /// Marks the event reached, wakes the threads and streams waiting on it.
    pub(super) fn complete(&self, error: Option<Error>) {
        let waiters = {
            let mut s = self.state.lock();
            s.completed_at = Some(Instant::now());
            s.error = error;
            std::mem::take(&mut s.waiters)
        };
        self.done.notify_all();
        for stream in waiters {
            stream.wake();
        }
    }

    /// If the event is still pending, remembers `stream` to wake on completion and
    /// returns true; returns false if it is complete already.
    pub(super) fn add_waiter_if_pending(&self, stream: &Arc<HostStream>) -> bool {
        let mut s = self.state.lock();
        if s.completed_at.is_some() {
            return false;
        }
        s.waiters.push(stream.clone());
        true
    }

    fn completion(&self) -> Instant {
        let mut s = self.state.lock();
        while s.completed_at.is_none() {
            self.done.wait(&mut s);
        }
        s.completed_at.unwrap_or_else(Instant::now)
    }
}

impl StreamEvent for HostEvent {
    fn is_complete(&self) -> bool {
        self.state.lock().completed_at.is_some()
    }

    fn synchronize(&self) -> Result<()> {
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
            None => Ok(()),
        }
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<HostEvent>(end, "the host device")?;
        let (t0, t1) = (self.completion(), end.completion());
        Ok(if t1 >= t0 {
            t1.duration_since(t0).as_secs_f64() as f32 * 1000.0
        } else {
            -(t0.duration_since(t1).as_secs_f64() as f32 * 1000.0)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}
