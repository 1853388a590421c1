//! Device tracing, OMPT's buffer interface: per OpenMP device, the records of the kinds
//! a tool enabled (`ompt_set_trace_ompt`), collected while tracing is started and not
//! paused, and handed to the tool in buffers it supplies (`ompt_start_trace`'s request
//! and complete callbacks): a buffer when it is full, the rest when the tool flushes or
//! stops, when the device is finalised and when libomp ends the tool.
//!
//! A record is taken in three steps, each under its own lock, so that pausing, flushing
//! or stopping on one thread never tears a record another thread is writing: its start
//! and end are marked with events of the device (`trace_clock`) while the operation
//! runs; it waits, with its events, until delivery turns them into times (an event of a
//! `nowait` kernel may still be running: an ordinary delivery stops there, a flush
//! waits); then it is copied into the tool's buffer. Tool code runs outside every lock
//! but the delivery's own, which keeps buffers in order; a tool that flushes from inside
//! a buffer callback is answered at once, its records left to the delivery under way.

use crate::ompt::trace_clock::{monotonic_ns, Clock};
use crate::ompt::types::{event, BufferCompleteFn, BufferRequestFn, DeviceTime, Record};
use crate::plugin::ol::{self, Device, Event, Queue};
use parking_lot::{Mutex, RwLock};
use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The kinds of record, one bit each, as `ompt_set_trace_ompt` enables them.
pub mod kind {
    pub const TARGET: u32 = 1;
    pub const DATA_OP: u32 = 2;
    pub const KERNEL: u32 = 4;
    pub const ALL: u32 = TARGET | DATA_OP | KERNEL;
}

/// The record kind an event's tracing enables (its EMI and older forms alike; 0: every
/// kind), or `None` for an event that has no device record.
pub fn kind_of(which: c_int) -> Option<u32> {
    match which {
        0 => Some(kind::ALL),
        event::TARGET | event::TARGET_EMI => Some(kind::TARGET),
        event::TARGET_DATA_OP | event::TARGET_DATA_OP_EMI => Some(kind::DATA_OP),
        event::TARGET_SUBMIT | event::TARGET_SUBMIT_EMI => Some(kind::KERNEL),
        _ => None,
    }
}

/// When something happened: an event of the device still to be read, or a time.
pub enum Stamp {
    Mark(Event),
    At(DeviceTime),
}

/// A record whose times are not read yet.
pub struct Pending {
    pub record: Record,
    pub start: Stamp,
    /// The end, for the kinds whose record carries one.
    pub end: Option<Stamp>,
}

/// Bytes of one record in a tool's buffer.
pub const RECORD_BYTES: usize = std::mem::size_of::<Record>();

/// Records kept for a tool that gives no buffer, at most (then new ones are dropped,
/// with one warning).
const KEPT_AT_MOST: usize = 1 << 20;

pub struct TraceDevice {
    pub number: c_int,
    /// The kinds collected now (started, not paused, device alive): what an event checks.
    collecting: AtomicU32,
    /// A delivery is worth trying (a buffer is full or none was asked for yet).
    due: AtomicBool,
    state: Mutex<State>,
    clock: Mutex<ClockSlot>,
    delivery: Mutex<()>,
}

struct ClockSlot {
    device: Device,
    clock: Option<Clock>,
}

impl ClockSlot {
    /// The device's clock, started at its first use (`None`: the device makes no events).
    fn started(&mut self) -> Option<&mut Clock> {
        if self.clock.is_none() {
            self.clock = Clock::new(self.device).ok();
        }
        self.clock.as_mut()
    }
}

#[derive(Default)]
struct State {
    enabled: u32,
    started: bool,
    paused: bool,
    /// The device was finalised: its records are read, nothing new is collected.
    ended: bool,
    request: Option<BufferRequestFn>,
    complete: Option<BufferCompleteFn>,
    pending: VecDeque<Pending>,
    ready: VecDeque<Record>,
    /// The tool's buffer this library holds: its address and size.
    buffer: Option<(usize, usize)>,
    warned: bool,
}

// SAFETY: the raw pointers in records are addresses reported to the tool, never
// dereferenced here; events are liboffload handles, usable from any thread.
unsafe impl Send for State {}

/// Every device that was initialised while a tool was connected, by OpenMP number; the
/// address of an entry is the `ompt_device_t *` the tool gets.
static DEVICES: RwLock<Vec<&'static TraceDevice>> = RwLock::new(Vec::new());
/// Some device's delivery is due.
static DUE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is delivering (its tool callbacks are running).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// The trace state of OpenMP device `number`, made when it is first initialised; its
/// address is the device handle of `device_initialize`.
pub fn initialized(number: usize, device: Device) -> &'static TraceDevice {
    let mut devices = DEVICES.write();
    while devices.len() <= number {
        let number = devices.len() as c_int;
        devices.push(Box::leak(Box::new(TraceDevice {
            number,
            collecting: AtomicU32::new(0),
            due: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            clock: Mutex::new(ClockSlot {
                device,
                clock: None,
            }),
            delivery: Mutex::new(()),
        })));
    }
    let traced = devices[number];
    // A device initialised again (after the runtime's shutdown) may be another handle.
    traced.clock.lock().device = device;
    let mut s = traced.state.lock();
    s.ended = false;
    traced.update(&s);
    traced
}

/// The device whose handle a tool passes, if it is one of ours.
pub fn from_handle(handle: *mut c_void) -> Option<&'static TraceDevice> {
    DEVICES
        .read()
        .iter()
        .copied()
        .find(|d| std::ptr::eq(*d as *const TraceDevice, handle.cast()))
}

/// OpenMP device `number`'s trace state, if it was initialised with a tool connected.
pub fn device(number: usize) -> Option<&'static TraceDevice> {
    DEVICES.read().get(number).copied()
}

/// OpenMP device `number`, when it collects records of `kind`.
#[inline]
pub fn collecting(number: usize, kind: u32) -> Option<&'static TraceDevice> {
    let devices = DEVICES.read();
    let traced = *devices.get(number)?;
    (traced.collecting.load(Ordering::Acquire) & kind != 0).then_some(traced)
}

impl TraceDevice {
    pub fn handle(&'static self) -> *mut c_void {
        (self as *const TraceDevice).cast_mut().cast()
    }

    fn update(&self, s: &State) {
        let on = s.started && !s.paused && !s.ended;
        self.collecting
            .store(if on { s.enabled } else { 0 }, Ordering::Release);
    }

    /// `ompt_set_trace_ompt`: (stops) collecting records of `kinds`.
    pub fn enable(&self, kinds: u32, on: bool) {
        let mut s = self.state.lock();
        if on {
            s.enabled |= kinds;
        } else {
            s.enabled &= !kinds;
        }
        self.update(&s);
    }

    /// `ompt_start_trace`: collects from now on, into the tool's buffers.
    pub fn start(&self, request: BufferRequestFn, complete: BufferCompleteFn) {
        let mut s = self.state.lock();
        s.request = Some(request);
        s.complete = Some(complete);
        s.started = true;
        s.paused = false;
        self.update(&s);
    }

    /// `ompt_pause_trace`: stops collecting for a while (`pause`), or again collects.
    /// False when tracing is not started.
    pub fn pause(&self, pause: bool) -> bool {
        let mut s = self.state.lock();
        if !s.started {
            return false;
        }
        s.paused = pause;
        self.update(&s);
        true
    }

    /// `ompt_stop_trace`: no more records; what was collected is delivered, and the
    /// tool's unused buffer handed back. False when tracing was not started.
    pub fn stop(&'static self) -> bool {
        {
            let mut s = self.state.lock();
            if !s.started {
                return false;
            }
            s.started = false;
            self.update(&s);
        }
        self.deliver(true);
        self.hand_back_buffer();
        true
    }

    /// `ompt_flush_trace`: delivers every record collected so far, waiting for those of
    /// work still running. False when tracing is not started.
    pub fn flush(&'static self) -> bool {
        if !self.state.lock().started {
            return false;
        }
        self.deliver(true);
        true
    }

    /// The device is finalised (before liboffload shuts down): its records' times are
    /// read now, their delivery waits until the caller lets the registry go.
    pub fn finalize(&self) {
        {
            let mut s = self.state.lock();
            s.ended = true;
            self.update(&s);
        }
        self.read_times(true);
        if let Some(clock) = self.clock.lock().clock.take() {
            clock.end();
        }
        self.due.store(true, Ordering::Release);
        DUE.store(true, Ordering::Release);
    }

    /// An event of the device that completes now.
    pub fn stamp(&self) -> Stamp {
        match self.clock.lock().started().map(|c| c.mark()) {
            Some(Ok(event)) => Stamp::Mark(event),
            // A device that cannot make events is timed by the host's clock.
            _ => Stamp::At(monotonic_ns()),
        }
    }

    /// An event that completes when the work enqueued on `queue` so far has.
    pub fn stamp_on(&self, queue: Option<&Queue>) -> Stamp {
        match queue.map(ol::create_event) {
            Some(Ok(event)) => Stamp::Mark(event),
            _ => self.stamp(),
        }
    }

    /// `ompt_get_device_time`.
    pub fn now(&self) -> DeviceTime {
        match self.clock.lock().started().map(Clock::now) {
            Some(Ok(time)) => time,
            _ => monotonic_ns(),
        }
    }

    /// `ompt_translate_time`: `time` on `omp_get_wtime`'s clock, in seconds.
    pub fn translate(&self, time: DeviceTime) -> f64 {
        match self.clock.lock().started() {
            Some(clock) => clock.to_wtime(time),
            None => time as f64 * 1e-9,
        }
    }

    /// Keeps a record for the tool (dropped when collecting stopped meanwhile).
    pub fn record(&self, pending: Pending, kind: u32) {
        let mut s = self.state.lock();
        let kept = s.pending.len() + s.ready.len();
        if self.collecting.load(Ordering::Acquire) & kind == 0 || kept >= KEPT_AT_MOST {
            if kept >= KEPT_AT_MOST && !s.warned {
                s.warned = true;
                crate::report::policy::message(&format!(
                    "warning: OMPT device {} keeps {KEPT_AT_MOST} trace records the tool gave \
                     no buffer for; later records are dropped",
                    self.number
                ));
            }
            drop(s);
            discard(pending);
            return;
        }
        s.pending.push_back(pending);
        let full = match s.buffer {
            None => true,
            Some((_, bytes)) => kept + 1 >= (bytes / RECORD_BYTES).max(1),
        };
        if full {
            self.due.store(true, Ordering::Release);
            DUE.store(true, Ordering::Release);
        }
    }

    /// Turns the waiting records' events into times, in order: all of them (`wait`),
    /// or up to the first whose work is still running.
    fn read_times(&self, wait: bool) {
        let mut taken = std::mem::take(&mut self.state.lock().pending);
        let mut read = Vec::with_capacity(taken.len());
        {
            let mut slot = self.clock.lock();
            while let Some(p) = taken.front() {
                let done = is_done(&p.start) && p.end.as_ref().map_or(true, is_done);
                if !wait && !done {
                    break;
                }
                let Some(p) = taken.pop_front() else { break };
                read.push(resolve(slot.clock.as_mut(), p));
            }
        }
        let mut s = self.state.lock();
        s.ready.extend(read);
        // What is still running goes back in front of what came meanwhile.
        while let Some(p) = taken.pop_back() {
            s.pending.push_front(p);
        }
    }

    /// Fills the tool's buffers with the records whose times are read: full buffers, or
    /// everything (`all`, and always once the device is finalised).
    pub fn deliver(&'static self, all: bool) {
        if DELIVERING.with(Cell::get) {
            return;
        }
        let _one = self.delivery.lock();
        DELIVERING.with(|d| d.set(true));
        let _reset = Reset;
        self.due.store(false, Ordering::Release);
        let all = all || self.state.lock().ended;
        self.read_times(all);
        loop {
            let request = {
                let s = self.state.lock();
                if s.ready.is_empty() {
                    return;
                }
                match (s.buffer, s.request) {
                    (Some(_), _) => None,
                    (None, Some(request)) => Some(request),
                    (None, None) => return,
                }
            };
            if let Some(request) = request {
                let mut buffer: *mut c_void = std::ptr::null_mut();
                let mut bytes = 0usize;
                // SAFETY: the tool's request callback, given where to write its answer.
                unsafe { request(self.number, &mut buffer, &mut bytes) };
                let mut s = self.state.lock();
                if buffer.is_null() || bytes < RECORD_BYTES {
                    if !s.warned {
                        s.warned = true;
                        crate::report::policy::message(&format!(
                            "warning: the OMPT tool's buffer request for device {} gave {} \
                             bytes at {buffer:p}; a buffer of at least {RECORD_BYTES} bytes \
                             is needed, the records wait",
                            self.number, bytes
                        ));
                    }
                    return;
                }
                s.buffer = Some((buffer as usize, bytes));
            }
            let (records, (buffer, bytes), complete) = {
                let mut s = self.state.lock();
                let (Some(buffer), Some(complete)) = (s.buffer, s.complete) else {
                    return;
                };
                let fits = buffer.1 / RECORD_BYTES;
                if !all && s.ready.len() < fits {
                    return;
                }
                let n = fits.min(s.ready.len());
                s.buffer = None;
                (s.ready.drain(..n).collect::<Vec<_>>(), buffer, complete)
            };
            let _ = bytes;
            for (i, record) in records.iter().enumerate() {
                // SAFETY: the tool's buffer holds `bytes` bytes, at least as many as
                // these records take; it may not be aligned for them.
                unsafe { (buffer as *mut Record).add(i).write_unaligned(*record) };
            }
            // SAFETY: the tool's complete callback: its buffer, the bytes of records in
            // it, the cursor of the first (its address), and the buffer back to it.
            unsafe {
                complete(
                    self.number,
                    buffer as *mut c_void,
                    records.len() * RECORD_BYTES,
                    buffer as u64,
                    1,
                )
            };
        }
    }

    /// The tool's buffer this library holds, given back empty (no cursor) so it can be
    /// freed.
    fn hand_back_buffer(&self) {
        let (buffer, complete) = {
            let mut s = self.state.lock();
            (s.buffer.take(), s.complete)
        };
        if let (Some((buffer, _)), Some(complete)) = (buffer, complete) {
            // SAFETY: the tool's complete callback with its own buffer and no records.
            unsafe { complete(self.number, buffer as *mut c_void, 0, 0, 1) };
        }
    }
}

struct Reset;
impl Drop for Reset {
    fn drop(&mut self) {
        let _ = DELIVERING.try_with(|d| d.set(false));
    }
}

fn is_done(stamp: &Stamp) -> bool {
    match stamp {
        Stamp::Mark(event) => ol::event_is_complete(event).unwrap_or(true),
        Stamp::At(_) => true,
    }
}

fn time(clock: Option<&mut Clock>, stamp: Stamp) -> DeviceTime {
    match (stamp, clock) {
        (Stamp::At(time), _) => time,
        (Stamp::Mark(event), Some(clock)) => {
            clock.time_of(event).unwrap_or_else(|_| monotonic_ns())
        }
        (Stamp::Mark(event), None) => {
            let _ = ol::destroy_event(event);
            monotonic_ns()
        }
    }
}

/// The record with its times read.
fn resolve(mut clock: Option<&mut Clock>, p: Pending) -> Record {
    let mut record = p.record;
    record.time = time(clock.as_deref_mut(), p.start);
    if let Some(end) = p.end {
        let end = time(clock, end);
        // The union's member is the one the record's kind names.
        match record.kind {
            event::TARGET_DATA_OP => record.body.data_op.end_time = end,
            event::TARGET_SUBMIT => record.body.kernel.end_time = end,
            _ => {}
        }
    }
    record
}

/// A record that will not be delivered: its events are let go.
fn discard(p: Pending) {
    for stamp in std::iter::once(p.start).chain(p.end) {
        if let Stamp::Mark(event) = stamp {
            let _ = ol::destroy_event(event);
        }
    }
}

/// Delivers the devices whose buffers are due (not while the registry is locked: the
/// caller knows).
pub fn deliver_due() {
    // A load first: every let-go of the registry with a tool connected comes here, on
    // every thread, and a swap would write the shared line each time.
    if !DUE.load(Ordering::Acquire) || !DUE.swap(false, Ordering::AcqRel) {
        return;
    }
    let devices: Vec<&'static TraceDevice> = DEVICES.read().clone();
    for d in devices {
        if d.due.load(Ordering::Acquire) {
            d.deliver(false);
        }
    }
}

/// libomp ends the tool: every started device delivers what it has and hands its
/// buffer back.
pub fn finish_all() {
    let devices: Vec<&'static TraceDevice> = DEVICES.read().clone();
    for d in devices {
        d.deliver(true);
        d.hand_back_buffer();
        let mut s = d.state.lock();
        s.started = false;
        d.update(&s);
    }
}
