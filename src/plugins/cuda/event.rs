//! CUDA events: a `CUevent` of the device's primary context recorded on a stream,
//! taken from the context's pool and given back when dropped. Events the application
//! records are timed; the backend's own ordering-only events (`Timing::Untimed`) are
//! created with `CU_EVENT_DISABLE_TIMING`.

use super::context::PrimaryContext;
use super::driver::Driver;
use super::ffi::{CuEvent, CuStream, EVENT_DEFAULT, EVENT_DISABLE_TIMING};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{own_event, StreamEvent};
use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;

/// A recorded `CUevent`, back to its context's pool when dropped.
pub struct CudaEvent {
    context: Arc<PrimaryContext>,
    event: CuEvent,
    timing: Timing,
    /// Recorded on a stream with nothing pending: complete from the start. The driver
    /// answers "not ready" until the GPU has passed the record, microseconds later; an
    /// event on an empty queue is complete at once, as on every other device.
    complete_at_record: bool,
}

impl CudaEvent {
    /// An event of `context`'s pool recorded on `stream` (of that context).
    pub fn record(
        context: &Arc<PrimaryContext>,
        stream: CuStream,
        timing: Timing,
    ) -> Result<CudaEvent> {
        let driver = context.driver();
        let idle = timing == Timing::Timed
            && matches!(context.on_handles(|| driver.stream_query(stream)), Ok(true));
        let event = CudaEvent {
            context: context.clone(),
            event: context.events().take(context, timing)?,
            timing,
            complete_at_record: idle,
        };
        context.on_handles(|| driver.event_record(event.event, stream))?;
        Ok(event)
    }

    pub fn handle(&self) -> CuEvent {
        self.event
    }
}

impl StreamEvent for CudaEvent {
    /// `cuEventQuery`: after a fault it answers the context's error on every call.
    fn is_complete(&self) -> Result<bool> {
        if self.complete_at_record {
            return Ok(true);
        }
        self.context
            .on_handles(|| self.context.driver().event_query(self.event))
    }

    fn synchronize(&self) -> Result<()> {
        self.context
            .on_handles(|| self.context.driver().event_synchronize(self.event))
    }

    fn elapsed_ms(&self, end: &dyn StreamEvent) -> Result<f32> {
        let end = own_event::<CudaEvent>(end, "a CUDA device")?;
        if self.timing == Timing::Untimed || end.timing == Timing::Untimed {
            return Err(Error::invalid_argument(
                "an ordering-only event of the CUDA backend carries no time",
            ));
        }
        self.synchronize()?;
        end.synchronize()?;
        let _current = self.context.make_current()?;
        self.context
            .driver()
            .event_elapsed_ms(self.event, end.event)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl Drop for CudaEvent {
    /// No driver call: the event goes back to the pool (a stream that waits on it keeps
    /// what it waited for, so reusing it is safe), wherever the last holder drops it,
    /// the driver's callback thread included.
    fn drop(&mut self) {
        self.context.events().give_back(self.event, self.timing);
    }
}

/// Whether an event can be timed (`cuEventElapsedTime`) or only orders work
/// (`CU_EVENT_DISABLE_TIMING`: cheaper to record and to wait on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    Timed,
    Untimed,
}

/// A context's events not in use, of each timing, for reuse: creating and destroying a
/// `CUevent` per recorded event costs driver calls (and allocations) each time.
#[derive(Default)]
pub struct EventPool {
    timed: Mutex<Vec<CuEvent>>,
    untimed: Mutex<Vec<CuEvent>>,
}

impl EventPool {
    fn list(&self, timing: Timing) -> &Mutex<Vec<CuEvent>> {
        match timing {
            Timing::Timed => &self.timed,
            Timing::Untimed => &self.untimed,
        }
    }

    /// An event of `timing` of `context` (whose pool this is): a pooled one, else a new
    /// one, made with the context current (an event belongs to the current context).
    pub fn take(&self, context: &PrimaryContext, timing: Timing) -> Result<CuEvent> {
        if let Some(event) = self.list(timing).lock().pop() {
            return Ok(event);
        }
        let _current = context.make_current()?;
        context.driver().event_create(match timing {
            Timing::Timed => EVENT_DEFAULT,
            Timing::Untimed => EVENT_DISABLE_TIMING,
        })
    }

    pub fn give_back(&self, event: CuEvent, timing: Timing) {
        self.list(timing).lock().push(event);
    }

    /// Destroys the pooled events (the context is current and about to be released).
    pub fn destroy_all(&self, driver: &Driver) {
        for list in [&self.timed, &self.untimed] {
            for event in list.lock().drain(..) {
                let _ = driver.event_destroy(event);
            }
        }
    }
}
