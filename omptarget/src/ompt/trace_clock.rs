//! A device's clock for OMPT trace records: the completion times of events of the
//! device's own queues, as the device measures them (CUDA's and AMDGPU's events on GPUs;
//! on host and remote devices, whose queues run on host threads, the host's clock).
//!
//! An event's time is its distance from a reference event of the same device, whose
//! time is known; a distance over a second makes that event the next reference, so that
//! the single-precision milliseconds liboffload reports stay fine-grained however long
//! the program runs. Times are nanoseconds; the first reference takes the host's
//! monotonic clock, so times of different devices are close to comparable.

use crate::ompt::types::DeviceTime;
use crate::plugin::ol::{self, Device, Event, Queue};

/// A distance past which the measured event becomes the reference.
const REANCHOR_MS: f32 = 1000.0;

pub struct Clock {
    /// An otherwise unused queue: an event recorded on it completes at once, "now".
    queue: Queue,
    reference: Event,
    reference_time: DeviceTime,
    /// The first reference's time, and `omp_get_wtime`'s reading when it completed.
    origin_time: DeviceTime,
    origin_wtime: f64,
}

impl Clock {
    pub fn new(device: Device) -> ol::Result<Clock> {
        let queue = ol::create_queue(device)?;
        let origin = ol::create_event(&queue)?;
        ol::sync_event(&origin)?;
        let origin_time = monotonic_ns();
        Ok(Clock {
            queue,
            reference: origin,
            reference_time: origin_time,
            origin_time,
            origin_wtime: wtime(),
        })
    }

    /// An event that completes now on the device (an operation's start or end).
    pub fn mark(&self) -> ol::Result<Event> {
        ol::create_event(&self.queue)
    }

    /// The device time at which `event` completed (waiting for it); the event is spent.
    pub fn time_of(&mut self, event: Event) -> ol::Result<DeviceTime> {
        let ms = ol::elapsed_ms(&self.reference, &event);
        let Ok(ms) = ms else {
            let _ = ol::destroy_event(event);
            return ms.map(|_| 0);
        };
        let time = self
            .reference_time
            .saturating_add_signed((f64::from(ms) * 1e6).round() as i64);
        if ms > REANCHOR_MS {
            let old = std::mem::replace(&mut self.reference, event);
            self.reference_time = time;
            let _ = ol::destroy_event(old);
        } else {
            let _ = ol::destroy_event(event);
        }
        Ok(time)
    }

    /// The device's time now.
    pub fn now(&mut self) -> ol::Result<DeviceTime> {
        let event = self.mark()?;
        self.time_of(event)
    }

    /// `time` as `omp_get_wtime` would have read it then, in seconds.
    pub fn to_wtime(&self, time: DeviceTime) -> f64 {
        self.origin_wtime + (time as f64 - self.origin_time as f64) * 1e-9
    }

    /// Ends the clock's queue and reference (before liboffload shuts down).
    pub fn end(self) {
        let _ = ol::destroy_event(self.reference);
        let _ = ol::destroy_queue(self.queue);
    }
}

/// The host's monotonic clock in nanoseconds.
pub fn monotonic_ns() -> DeviceTime {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the current time into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `omp_get_wtime()` of the libomp in the process (the clock a tool compares with), or
/// the wall clock it reads when there is none.
fn wtime() -> f64 {
    // SAFETY: looking a symbol up in the process's global scope.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_get_wtime".as_ptr()) };
    if !f.is_null() {
        // SAFETY: libomp's `double omp_get_wtime(void)`.
        let f: unsafe extern "C" fn() -> f64 = unsafe { std::mem::transmute(f) };
        // SAFETY: takes nothing, reads a clock.
        return unsafe { f() };
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
