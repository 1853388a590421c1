//! Host steps handed to the driver (`cuLaunchHostFunc`) and not yet called. The driver
//! never calls the ones queued behind a fault (the context is lost), so a step is kept
//! here, not in the driver's hands: the callback takes it by number, and after a fault
//! the queue releases what its uncalled steps hold and says how many did not run.

use crate::plugin::device_stream::HostStep;
use crate::plugin::foundation::int_hash::IntMap;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every step handed to the driver and not yet called, by number.
static WAITING: Mutex<Option<IntMap<usize, HostStep>>> = Mutex::new(None);
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// The steps one queue handed to the driver, by number (those called since are gone
/// from `WAITING`).
#[derive(Default)]
pub struct QueueSteps(Mutex<Vec<usize>>);

impl QueueSteps {
    /// Keeps `step`; the value to give `cuLaunchHostFunc` as its data.
    pub fn hand_out(&self, step: HostStep) -> *mut c_void {
        let number = NEXT.fetch_add(1, Ordering::Relaxed);
        WAITING
            .lock()
            .get_or_insert_with(IntMap::default)
            .insert(number, step);
        self.0.lock().push(number);
        number as *mut c_void
    }

    /// The driver refused the step behind `data`: drops it.
    pub fn take_back(&self, data: *mut c_void) {
        drop(take(data as usize));
        self.0.lock().retain(|&n| n != data as usize);
    }

    /// Everything handed out has been called (the stream synchronized).
    pub fn all_called(&self) {
        self.0.lock().clear();
    }

    /// The stream stopped on a fault: releases the steps the driver will never call and
    /// answers how many there were.
    pub fn release_uncalled(&self) -> usize {
        let numbers = std::mem::take(&mut *self.0.lock());
        // Dropped outside the lock: a step may hold anything.
        let uncalled: Vec<HostStep> = numbers.into_iter().filter_map(take).collect();
        uncalled.len()
    }
}

fn take(number: usize) -> Option<HostStep> {
    WAITING.lock().as_mut().and_then(|w| w.remove(&number))
}

/// The `cuLaunchHostFunc` callback: runs the step numbered `data`, if still there.
pub unsafe extern "C" fn run_host_step(data: *mut c_void) {
    // The generic stream made the step one that neither fails nor unwinds.
    if let Some(step) = take(data as usize) {
        step.run();
    }
}
