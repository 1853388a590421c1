//! Runs an input: decodes one operation at a time, works out what the call must answer,
//! makes it, and checks the answer and its effect against the model.

use super::model::*;
use super::reader::Reader;
use offload::capi::*;
use std::ffi::{c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// No call may take longer (a hang is a finding).
pub const CALL_BOUND: Duration = Duration::from_secs(20);
/// Operations per input at most.
const MAX_OPS: usize = 64;

/// Calls made and errors answered, over the inputs run.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallCounts {
    pub inputs: u64,
    pub calls: u64,
    pub errors: u64,
}

/// What a call must answer.
#[derive(Clone, Debug)]
enum Expect {
    Ok,
    Code(u32),
    /// Any of these codes (0: success too) where several mistakes are made at once.
    AnyOf(Vec<u32>),
    /// Any documented error, or success: a call whose answer the model cannot know.
    Anything,
}

const OK: u32 = OL_ERRC_SUCCESS;

/// The process-wide state: liboffload initialised once, the device under test, the
/// kernel image, and the watchdog.
pub struct Session {
    pub device: ol_device_handle_t,
    pub host: ol_device_handle_t,
    /// The device under test is the host device (its memory is this process's).
    pub is_host: bool,
    pub image: Vec<u8>,
    counts: Mutex<CallCounts>,
}

// SAFETY: the handles are liboffload's, valid on any thread until olShutDown.
unsafe impl Send for Session {}
// SAFETY: as above; the counters are behind a lock.
unsafe impl Sync for Session {}

/// The calls under way (thread, start, what), watched by one thread.
fn watch() -> &'static Mutex<Vec<(std::thread::ThreadId, Instant, String)>> {
    static WATCH: OnceLock<Mutex<Vec<(std::thread::ThreadId, Instant, String)>>> = OnceLock::new();
    WATCH.get_or_init(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(500));
            let calls = watch().lock().unwrap();
            if let Some((_, start, what)) = calls.iter().find(|(_, s, _)| s.elapsed() > CALL_BOUND)
            {
                eprintln!(
                    "api fuzz: {what} has not returned after {:?} (bound {CALL_BOUND:?})",
                    start.elapsed()
                );
                std::process::abort();
            }
        });
        Mutex::new(Vec::new())
    })
}

/// `OFFLOAD_FUZZ_TRACE`: each call is printed before it is made.
fn trace_calls() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("OFFLOAD_FUZZ_TRACE").is_some())
}

fn code_of(r: ol_result_t) -> u32 {
    if r.is_null() {
        OK
    } else {
        // SAFETY: a non-NULL result points to an interned error, valid until exit.
        unsafe { (*r).Code }
    }
}

fn details_of(r: ol_result_t) -> String {
    if r.is_null() {
        return String::new();
    }
    // SAFETY: as above; Details is a NUL-terminated string (NULL checked).
    unsafe {
        let d = (*r).Details;
        if d.is_null() {
            String::new()
        } else {
            CStr::from_ptr(d).to_string_lossy().into_owned()
        }
    }
}

/// The repository's root (where `c-tests/kernels` is), from this crate's manifest folder.
fn repository_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|d| d.join("c-tests/kernels/queue_work.c").is_file())
        .expect("c-tests/kernels/queue_work.c above the crate")
        .to_path_buf()
}

/// `c-tests/kernels/queue_work.c` built as a host-device kernel image.
fn build_kernel_image() -> Vec<u8> {
    let root = repository_root();
    let out = std::env::temp_dir().join(format!("api-fuzz-kernels-{}.so", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-std=gnu11", "-I"])
        .arg(root.join("include"))
        .arg(root.join("c-tests/kernels/queue_work.c"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("a C compiler (CC or cc) to build the kernel image");
    assert!(status.success(), "{cc} could not build queue_work.c");
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
}

extern "C" fn collect(device: ol_device_handle_t, data: *mut c_void) -> bool {
    // SAFETY: `data` is the Vec `Session::open` passes, alive during the iteration.
    unsafe { (*data.cast::<Vec<ol_device_handle_t>>()).push(device) };
    true
}

fn device_type(d: ol_device_handle_t) -> u32 {
    let mut t = 0u32;
    let r = olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, 4, (&mut t as *mut u32).cast());
    assert!(r.is_null(), "olGetDeviceInfo(TYPE): {}", details_of(r));
    t
}

fn backend(d: ol_device_handle_t) -> u32 {
    let mut p: ol_platform_handle_t = null_mut();
    let r = olGetDeviceInfo(
        d,
        OL_DEVICE_INFO_PLATFORM,
        std::mem::size_of::<ol_platform_handle_t>(),
        (&mut p as *mut ol_platform_handle_t).cast(),
    );
    assert!(r.is_null(), "{}", details_of(r));
    let mut b = 0u32;
    let r = olGetPlatformInfo(p, OL_PLATFORM_INFO_BACKEND, 4, (&mut b as *mut u32).cast());
    assert!(r.is_null(), "{}", details_of(r));
    b
}

/// The host function the fuzzer queues: bumps the counter it is given.
unsafe extern "C" fn bump(data: *mut c_void) {
    // SAFETY: `data` is the session's counter, which lives as long as the process.
    unsafe { (*data.cast::<AtomicU64>()).fetch_add(1, Ordering::SeqCst) };
}

fn host_calls() -> &'static AtomicU64 {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    &CALLS
}

/// The arguments of `add` (queue_work.h): data[i] += delta for i < n.
#[repr(C)]
struct AddArgs {
    data: usize,
    delta: i32,
    n: usize,
}

impl Session {
    /// liboffload initialised; the device under test is `OFFLOAD_FUZZ_DEVICE`: `host`
    /// (the default) or `remote` (the first device of the MPI platform: run under
    /// mpirun with a device server).
    pub fn open() -> Session {
        let r = olInit();
        assert!(r.is_null(), "olInit: {}", details_of(r));
        let mut all: Vec<ol_device_handle_t> = Vec::new();
        let r = olIterateDevices(Some(collect), (&mut all as *mut Vec<_>).cast());
        assert!(r.is_null(), "{}", details_of(r));
        let host = *all
            .iter()
            .find(|&&d| {
                device_type(d) == OL_DEVICE_TYPE_HOST && backend(d) == OL_PLATFORM_BACKEND_HOST
            })
            .expect("a host device");
        let which = std::env::var("OFFLOAD_FUZZ_DEVICE").unwrap_or_else(|_| "host".into());
        let device = match which.as_str() {
            "host" => host,
            "remote" => *all
                .iter()
                .find(|&&d| backend(d) == OL_PLATFORM_BACKEND_MPI)
                .expect(
                    "OFFLOAD_FUZZ_DEVICE=remote: no remote device (run under mpirun with a server)",
                ),
            other => panic!("OFFLOAD_FUZZ_DEVICE={other}: want host or remote"),
        };
        watch();
        Session {
            device,
            host,
            is_host: device == host,
            image: build_kernel_image(),
            counts: Mutex::new(CallCounts::default()),
        }
    }

    pub fn counts(&self) -> CallCounts {
        *self.counts.lock().unwrap()
    }

    /// Runs one input to its end and cleans up after it; panics on a finding.
    pub fn run(&self, data: &[u8]) {
        let mut run = Run {
            s: self,
            m: Model::default(),
            r: Reader::new(data),
            counts: CallCounts::default(),
            log: Vec::new(),
        };
        let before = host_calls().load(Ordering::SeqCst);
        let mut ops = 0;
        while !run.r.done() && ops < MAX_OPS {
            run.step();
            ops += 1;
        }
        run.finish();
        let called = host_calls().load(Ordering::SeqCst) - before;
        assert_eq!(
            called, run.m.host_calls_expected,
            "host functions run: {called}, queued: {}",
            run.m.host_calls_expected
        );
        let mut c = self.counts.lock().unwrap();
        c.inputs += 1;
        c.calls += run.counts.calls;
        c.errors += run.counts.errors;
    }
}

struct Run<'a> {
    s: &'a Session,
    m: Model,
    r: Reader<'a>,
    counts: CallCounts,
    /// The calls made so far (for a finding's report).
    log: Vec<String>,
}

impl Run<'_> {
    /// Reports a finding with the calls that led to it.
    fn finding(&self, what: String) -> ! {
        let recent: Vec<&String> = self.log.iter().rev().take(16).rev().collect();
        panic!("api fuzz finding: {what}\nlast calls:\n{recent:#?}");
    }

    /// Makes one call, timed and watched, and checks its answer against `expect`.
    fn call(&mut self, what: String, expect: Expect, f: impl FnOnce() -> ol_result_t) -> u32 {
        if trace_calls() {
            eprintln!("api fuzz: {what}");
        }
        let me = std::thread::current().id();
        watch()
            .lock()
            .unwrap()
            .push((me, Instant::now(), what.clone()));
        let start = Instant::now();
        let r = f();
        let took = start.elapsed();
        watch().lock().unwrap().retain(|(t, _, _)| *t != me);
        self.counts.calls += 1;
        let code = code_of(r);
        let details = details_of(r);
        self.log.push(format!("{what} -> {code}"));
        let mut problem = None;
        if took > CALL_BOUND {
            problem = Some(format!("took {took:?}, bound {CALL_BOUND:?}"));
        }
        if code != OK {
            self.counts.errors += 1;
            // SAFETY: olGetErrcName returns a static NUL-terminated name, never NULL.
            let name = unsafe { CStr::from_ptr(olGetErrcName(code)) }.to_string_lossy();
            if code == OL_ERRC_UNKNOWN || code >= OL_ERRC_LAST {
                problem = Some(format!("answered code {code} ({details})"));
            } else if details.trim().is_empty() {
                problem = Some(format!("error {code} without Details"));
            } else if !name.starts_with("OL_ERRC_") || name == "OL_ERRC_UNKNOWN_CODE" {
                problem = Some(format!("error {code} named {name:?} by olGetErrcName"));
            }
        }
        let fine = match &expect {
            Expect::Ok => code == OK,
            Expect::Code(c) => code == *c,
            Expect::AnyOf(set) => set.contains(&code),
            Expect::Anything => true,
        };
        if !fine {
            problem = Some(format!("expected {expect:?}, got {code}: {details}"));
        }
        if let Some(why) = problem {
            self.finding(format!("{what}: {why}"));
        }
        code
    }

    // ---- choosing objects ---------------------------------------------------------------

    /// A queue argument: (handle, index of a live queue if it is one, what the handle is).
    fn queue_arg(&mut self, allow_null: bool) -> (ol_queue_handle_t, Option<usize>, QueueArg) {
        let live = self.m.live_queues();
        match self.r.pick(8) {
            0 if allow_null => (null_mut(), None, QueueArg::Null),
            1 if self.m.queues.iter().any(|q| !q.live) => {
                let dead: Vec<_> = self.m.queues.iter().filter(|q| !q.live).collect();
                let q = dead[self.r.pick(dead.len())].handle;
                (q, None, QueueArg::Stale)
            }
            2 => (made_up(), None, QueueArg::Stale),
            _ if !live.is_empty() => {
                let i = live[self.r.pick(live.len())];
                (self.m.queues[i].handle, Some(i), QueueArg::Live)
            }
            _ if allow_null => (null_mut(), None, QueueArg::Null),
            _ => (made_up(), None, QueueArg::Stale),
        }
    }

    /// A place of `n` bytes: usually inside an allocation or host buffer, sometimes
    /// running past an allocation's end (never past a host buffer's: that is plain
    /// memory no library can check). `None` when there is nothing to point at.
    fn place(&mut self, n: usize, allow_host: bool) -> Option<(Place, bool)> {
        let allocs: Vec<usize> = self
            .m
            .live_allocs()
            .into_iter()
            .filter(|&i| self.m.allocs[i].bytes.is_some())
            .collect();
        let host_ok = allow_host && self.m.hosts.iter().any(|h| h.mem.len() >= n);
        if allocs.is_empty() && !host_ok {
            return None;
        }
        if allocs.is_empty() || (host_ok && self.r.pick(3) == 0) {
            let fits: Vec<usize> = (0..self.m.hosts.len())
                .filter(|&i| self.m.hosts[i].mem.len() >= n)
                .collect();
            let i = fits[self.r.pick(fits.len())];
            let room = self.m.hosts[i].mem.len() - n;
            let off = self.r.u16() as usize % (room + 1);
            return Some((Place::Host(i, off), true));
        }
        let i = allocs[self.r.pick(allocs.len())];
        let size = self.m.allocs[i].size;
        let off = self.r.u16() as usize % size; // inside the allocation
        let fits = n <= size - off;
        Some((Place::Alloc(i, off), fits))
    }

    /// The address of a place, and the device that names it in a copy: an allocation's
    /// owner or the host device (wrong for device memory of another device), a host
    /// buffer's the host device.
    fn address(&mut self, place: Place) -> (usize, ol_device_handle_t, bool) {
        match place {
            Place::Alloc(i, off) => {
                let a = &self.m.allocs[i];
                let ptr = a.ptr + off;
                let host_visible = a.kind != OL_ALLOC_TYPE_DEVICE || self.s.is_host;
                if self.r.pick(4) == 0 {
                    (ptr, self.s.host, host_visible)
                } else {
                    (ptr, self.s.device, true)
                }
            }
            Place::Host(i, off) => (
                self.m.hosts[i].mem.as_ptr() as usize + off,
                self.s.host,
                true,
            ),
        }
    }

    // ---- waiting for queued work -------------------------------------------------------

    fn settle(&mut self, pending: Pending) {
        match pending {
            Pending::None => return,
            Pending::Queue(q) => {
                let h = self.m.queues[q].handle;
                self.call(format!("olSyncQueue(q{q})"), Expect::Ok, || olSyncQueue(h));
            }
            Pending::Event(e) => {
                self.call(
                    "olSyncEvent(last of a destroyed queue)".into(),
                    Expect::Ok,
                    || olSyncEvent(e),
                );
                self.call("olDestroyEvent(it)".into(), Expect::Ok, || {
                    olDestroyEvent(e)
                });
            }
        }
        self.m.settled(pending);
    }

    /// Waits for the work on `place` unless it is queued on `queue` (which orders it).
    fn order(&mut self, place: Place, queue: Option<usize>) {
        let p = self.m.pending(place);
        if p != Pending::None && queue.map(Pending::Queue) != Some(p) {
            self.settle(p);
        }
    }

    fn after(&mut self, place: Place, queue: Option<usize>) {
        if let Some(q) = queue {
            self.m.set_pending(place, Pending::Queue(q));
            self.m.queues[q].busy = true;
        }
    }

    // ---- the operations -----------------------------------------------------------------

    fn step(&mut self) {
        match self.r.pick(20) {
            0 | 1 => self.alloc(),
            2 => self.free(),
            3 | 4 => self.copy(),
            5 => self.fill(),
            6 => self.create_queue(),
            7 => self.destroy_queue(),
            8 => self.event(),
            9 => self.sync(),
            10 | 11 => self.launch(),
            12 => self.host_function(),
            13 => self.info(),
            14 => self.mem_info(),
            15 => self.program(),
            16 => self.verify(),
            17 => self.host_buffer(),
            18 => self.second_thread(),
            _ => self.null_arguments(),
        }
    }

    fn alloc(&mut self) {
        let kind = [
            OL_ALLOC_TYPE_DEVICE,
            OL_ALLOC_TYPE_HOST,
            OL_ALLOC_TYPE_MANAGED,
            77,
        ][self.r.pick(4)];
        let size = self.r.size();
        let expect = if kind == 77 {
            Expect::AnyOf(vec![OL_ERRC_INVALID_ENUMERATION, OL_ERRC_INVALID_SIZE])
        } else if size == 0 {
            Expect::Code(OL_ERRC_INVALID_SIZE)
        } else if size > 1 << 30 {
            // Too much for any device here, or address space only (not modelled).
            Expect::AnyOf(vec![OK, OL_ERRC_OUT_OF_RESOURCES, OL_ERRC_INVALID_SIZE])
        } else {
            Expect::Ok
        };
        if self.m.allocs.iter().filter(|a| a.live).count() >= MAX_ALLOCS {
            return;
        }
        let device = self.s.device;
        let mut ptr: *mut c_void = null_mut();
        let code = self.call(format!("olMemAlloc(kind {kind}, {size})"), expect, || {
            olMemAlloc(device, kind, size, &mut ptr)
        });
        if code != OK {
            return;
        }
        // New memory holds whatever it holds: write known bytes, so the model knows them.
        let modelled = size <= 1 << 20;
        let mut bytes = None;
        if modelled {
            let seed = self.r.byte();
            let period: Vec<u8> = (0..=255u8).map(|k| k.wrapping_mul(31) ^ seed).collect();
            let init = repeated(&period, size);
            let (host, ptr_u) = (self.s.host, ptr as usize);
            self.call(
                format!("olMemcpy(init a{}, {size})", self.m.allocs.len()),
                Expect::Ok,
                || {
                    olMemcpy(
                        null_mut(),
                        ptr_u as *mut c_void,
                        device,
                        init.as_ptr().cast(),
                        host,
                        size,
                    )
                },
            );
            bytes = Some(init);
        }
        self.m.allocs.push(Alloc {
            ptr: ptr as usize,
            size,
            kind,
            bytes,
            live: true,
            pending: Pending::None,
            kernel_pending: false,
        });
    }

    fn free(&mut self) {
        let choice = self.r.pick(6);
        let live = self.m.live_allocs();
        if choice == 0 || live.is_empty() {
            // A pointer no allocation starts at: freed already, interior, or made up.
            // (A freed allocation's address may start a live one now: not that one.)
            let live_starts: Vec<usize> = live.iter().map(|&i| self.m.allocs[i].ptr).collect();
            let freed = self
                .m
                .allocs
                .iter()
                .find(|a| !a.live && !live_starts.contains(&a.ptr));
            let ptr = match freed {
                Some(a) if self.r.pick(2) == 0 => a.ptr,
                _ => match live.first() {
                    Some(&i) if self.m.allocs[i].size > 1 => self.m.allocs[i].ptr + 1,
                    _ => 0x10,
                },
            };
            self.call(
                format!("olMemFree({ptr:#x}, not an allocation's start)"),
                Expect::Code(OL_ERRC_INVALID_ARGUMENT),
                || olMemFree(ptr as *mut c_void),
            );
            return;
        }
        let i = live[self.r.pick(live.len())];
        // Work queued on the memory ends first: freeing under a running kernel is the
        // program's mistake no library can catch.
        let p = self.m.allocs[i].pending;
        self.settle(p);
        let ptr = self.m.allocs[i].ptr;
        self.call(format!("olMemFree(a{i})"), Expect::Ok, || {
            olMemFree(ptr as *mut c_void)
        });
        self.m.allocs[i].live = false;
    }

    fn copy(&mut self) {
        let n = match self.r.pick(4) {
            0 => self.r.size(),
            _ => 1 + self.r.u16() as usize % 2048,
        };
        let modelled_n = n <= 1 << 20;
        // A size past what is modelled goes to allocations only, which the library
        // checks; plain host memory it cannot.
        let Some((dst, dst_fits)) = self.place(n.min(1 << 20), modelled_n) else {
            return;
        };
        let Some((src, src_fits)) = self.place(n.min(1 << 20), modelled_n) else {
            return;
        };
        let (queue, qi, qarg) = self.queue_arg(true);
        let (dptr, ddev, dnamed) = self.address(dst);
        let (sptr, sdev, snamed) = self.address(src);
        let mut errors: Vec<u32> = Vec::new();
        if qarg == QueueArg::Stale {
            errors.push(OL_ERRC_INVALID_QUEUE);
        }
        let fits = modelled_n && dst_fits && src_fits;
        if n != 0 && !fits {
            errors.push(OL_ERRC_INVALID_SIZE);
        }
        if !dnamed || !snamed {
            errors.push(OL_ERRC_INVALID_ARGUMENT);
        }
        // Overlapping copies within one allocation or buffer are allowed: memmove.
        let expect = expect_from(&errors, n == 0);
        if errors.is_empty() {
            self.order(dst, qi);
            self.order(src, qi);
        }
        let code = self.call(
            format!("olMemcpy({qarg:?} q, {dst:?}, {src:?}, {n})"),
            expect,
            || {
                olMemcpy(
                    queue,
                    dptr as *mut c_void,
                    ddev,
                    sptr as *const c_void,
                    sdev,
                    n,
                )
            },
        );
        if code == OK && n != 0 && fits {
            if let Some(data) = self.m.read(src, n) {
                self.m.write(dst, &data);
            }
            self.after(dst, qi);
            self.after(src, qi);
        }
    }

    fn fill(&mut self) {
        let pattern_size = [1usize, 2, 4, 8, 3, 16, 0, 5][self.r.pick(8)];
        let count = self.r.u16() as usize % 300;
        let fill_size = match self.r.pick(6) {
            0 => count * pattern_size + 1, // not a multiple
            1 => usize::MAX - usize::MAX % pattern_size.max(1),
            _ => count * pattern_size,
        };
        let pattern: Vec<u8> = (0..pattern_size.max(1)).map(|_| self.r.byte()).collect();
        let modelled_n = fill_size <= 1 << 20;
        let Some((place, fits)) = self.place(fill_size.min(1 << 20), modelled_n) else {
            return;
        };
        if matches!(place, Place::Host(..)) && !self.s.is_host {
            return; // olMemFill names no device: host memory is only the host device's
        }
        let (queue, qi, qarg) = self.queue_arg(true);
        let (ptr, _, _) = self.address(place);
        let mut errors = Vec::new();
        if qarg == QueueArg::Stale {
            errors.push(OL_ERRC_INVALID_QUEUE);
        }
        if pattern_size == 0 || fill_size % pattern_size != 0 {
            errors.push(OL_ERRC_INVALID_SIZE);
        }
        if fill_size != 0 && !(fits && modelled_n) {
            errors.push(OL_ERRC_INVALID_SIZE);
        }
        let expect = expect_from(&errors, fill_size == 0 && errors.is_empty());
        if errors.is_empty() {
            self.order(place, qi);
        }
        let code = self.call(
            format!("olMemFill({qarg:?} q, {place:?}, pattern {pattern_size}, {fill_size})"),
            expect,
            || {
                olMemFill(
                    queue,
                    ptr as *mut c_void,
                    pattern_size,
                    pattern.as_ptr().cast(),
                    fill_size,
                )
            },
        );
        if code == OK && fill_size != 0 {
            let data = repeated(&pattern, fill_size);
            self.m.write(place, &data);
            self.after(place, qi);
        }
    }

    fn create_queue(&mut self) {
        if self.m.live_queues().len() >= MAX_QUEUES {
            return;
        }
        let device = self.s.device;
        let mut q: ol_queue_handle_t = null_mut();
        self.call("olCreateQueue".into(), Expect::Ok, || {
            olCreateQueue(device, &mut q)
        });
        self.m.queues.push(Queue {
            handle: q,
            live: true,
            busy: false,
        });
    }

    /// Destroys a queue, sometimes with work still in it (that work completes; an event
    /// recorded just before stands for it).
    fn destroy_queue(&mut self) {
        let (queue, qi, qarg) = self.queue_arg(true);
        let Some(i) = qi else {
            let expect = match qarg {
                QueueArg::Null => Expect::Code(OL_ERRC_INVALID_NULL_HANDLE),
                _ => Expect::Code(OL_ERRC_INVALID_QUEUE),
            };
            self.call(format!("olDestroyQueue({qarg:?})"), expect, || {
                olDestroyQueue(queue)
            });
            return;
        };
        if self.m.queues[i].busy {
            let mut e: ol_event_handle_t = null_mut();
            self.call(
                format!("olCreateEvent(q{i}, before destroy)"),
                Expect::Ok,
                || olCreateEvent(queue, &mut e),
            );
            let from = Pending::Queue(i);
            self.m.orphans.push(e);
            for a in &mut self.m.allocs {
                if a.pending == from {
                    a.pending = Pending::Event(e);
                }
            }
            for h in &mut self.m.hosts {
                if h.pending == from {
                    h.pending = Pending::Event(e);
                }
            }
        }
        self.call(format!("olDestroyQueue(q{i})"), Expect::Ok, || {
            olDestroyQueue(queue)
        });
        self.m.queues[i].live = false;
    }

    fn event(&mut self) {
        match self.r.pick(4) {
            0 => {
                if self.m.events.iter().filter(|e| e.live).count() >= MAX_EVENTS {
                    return;
                }
                let (queue, _, qarg) = self.queue_arg(true);
                let expect = qarg.expect();
                let mut e: ol_event_handle_t = null_mut();
                if self.call(format!("olCreateEvent({qarg:?})"), expect, || {
                    olCreateEvent(queue, &mut e)
                }) == OK
                {
                    self.m.events.push(Event {
                        handle: e,
                        live: true,
                    });
                }
            }
            1 => {
                // A queue waits for events, of its own or of other queues; some stale.
                let (queue, _, qarg) = self.queue_arg(false);
                let count = self.r.pick(4);
                let mut list = Vec::new();
                let mut stale = false;
                for _ in 0..count {
                    if self.m.events.is_empty() {
                        break;
                    }
                    let e = &self.m.events[self.r.pick(self.m.events.len())];
                    stale |= !e.live;
                    list.push(e.handle);
                }
                let mut errors = Vec::new();
                if qarg != QueueArg::Live {
                    errors.push(OL_ERRC_INVALID_QUEUE);
                }
                if stale {
                    errors.push(OL_ERRC_INVALID_EVENT);
                }
                // An empty list is given as NULL half the time (LLVM: NULL == Events).
                let ptr = if list.is_empty() && self.r.pick(2) == 0 {
                    errors.push(OL_ERRC_INVALID_NULL_POINTER);
                    null_mut()
                } else {
                    list.as_mut_ptr()
                };
                let expect = expect_from(&errors, false);
                let n = list.len();
                self.call(
                    format!("olWaitEvents({qarg:?}, {n} events, stale {stale})"),
                    expect,
                    || olWaitEvents(queue, ptr, n),
                );
            }
            2 => {
                if self.m.events.is_empty() {
                    return;
                }
                let k = self.r.pick(self.m.events.len());
                let (h, live) = (self.m.events[k].handle, self.m.events[k].live);
                let expect = live_or(live, OL_ERRC_INVALID_EVENT);
                self.call(format!("olSyncEvent(e{k})"), expect, || olSyncEvent(h));
            }
            _ => {
                if self.m.events.is_empty() {
                    return;
                }
                let k = self.r.pick(self.m.events.len());
                let (h, live) = (self.m.events[k].handle, self.m.events[k].live);
                let expect = live_or(live, OL_ERRC_INVALID_EVENT);
                self.call(format!("olDestroyEvent(e{k})"), expect, || {
                    olDestroyEvent(h)
                });
                self.m.events[k].live = false;
            }
        }
    }

    fn sync(&mut self) {
        let (queue, qi, qarg) = self.queue_arg(true);
        let expect = qarg.expect();
        if self.call(format!("olSyncQueue({qarg:?})"), expect, || {
            olSyncQueue(queue)
        }) == OK
        {
            if let Some(i) = qi {
                self.m.settled(Pending::Queue(i));
            }
        }
    }

    /// The program the session loaded first, made on demand.
    fn a_program(&mut self) -> Option<usize> {
        if let Some(i) = self.m.programs.iter().position(|p| p.live) {
            return Some(i);
        }
        self.load_program()
    }

    fn load_program(&mut self) -> Option<usize> {
        if self.m.programs.iter().filter(|p| p.live).count() >= MAX_PROGRAMS {
            return None;
        }
        let device = self.s.device;
        let image = self.s.image.as_ptr();
        let len = self.s.image.len();
        let mut p: ol_program_handle_t = null_mut();
        self.call("olCreateProgram(queue_work)".into(), Expect::Ok, || {
            olCreateProgram(device, image.cast(), len, &mut p)
        });
        let mut add: ol_symbol_handle_t = null_mut();
        self.call("olGetSymbol(add)".into(), Expect::Ok, || {
            olGetSymbol(p, c"add".as_ptr(), OL_SYMBOL_KIND_KERNEL, &mut add)
        });
        self.m.programs.push(Program {
            handle: p,
            live: true,
            add,
        });
        Some(self.m.programs.len() - 1)
    }

    fn launch(&mut self) {
        let Some(pi) = self.a_program() else { return };
        // A live program's kernel, or (sometimes) a destroyed program's.
        let dead: Vec<usize> = (0..self.m.programs.len())
            .filter(|&i| !self.m.programs[i].live)
            .collect();
        let (kernel, kernel_live) = if !dead.is_empty() && self.r.pick(8) == 0 {
            (self.m.programs[dead[self.r.pick(dead.len())]].add, false)
        } else {
            (self.m.programs[pi].add, true)
        };
        // The kernel's memory: a modelled allocation the device can reach.
        let allocs: Vec<usize> = self
            .m
            .live_allocs()
            .into_iter()
            .filter(|&i| self.m.allocs[i].bytes.is_some() && self.m.allocs[i].size >= 4)
            .collect();
        if allocs.is_empty() {
            return;
        }
        let i = allocs[self.r.pick(allocs.len())];
        let size = self.m.allocs[i].size;
        let off = (self.r.u16() as usize % (size / 4)) * 4;
        let room = (size - off) / 4;
        let n = self.r.u16() as usize % (room + 1);
        let delta = self.r.byte() as i32 - 128;
        let groups = 1 + self.r.pick(4) as u32;
        let group_size = 1 + self.r.pick(64) as u32;
        let mut size_args = ol_kernel_launch_size_args_t {
            Dimensions: 1,
            NumGroups: ol_dimensions_t {
                x: groups,
                y: 1,
                z: 1,
            },
            GroupSize: ol_dimensions_t {
                x: group_size,
                y: 1,
                z: 1,
            },
            DynSharedMemory: 0,
        };
        let args = AddArgs {
            data: self.m.allocs[i].ptr + off,
            delta,
            n,
        };
        let mut args_size = std::mem::size_of::<AddArgs>();
        let mut errors = Vec::new();
        let (queue, qi, qarg) = self.queue_arg(true);
        if qarg == QueueArg::Stale {
            errors.push(OL_ERRC_INVALID_QUEUE);
        }
        if !kernel_live {
            errors.push(OL_ERRC_INVALID_ARGUMENT);
        }
        match self.r.pick(12) {
            0 => {
                size_args.GroupSize.x = 0;
                errors.push(OL_ERRC_INVALID_ARGUMENT);
            }
            1 => {
                size_args.Dimensions = [0, 4][self.r.pick(2)];
                errors.push(OL_ERRC_INVALID_ARGUMENT);
            }
            2 if self.s.is_host => {
                // Arguments the kernel does not take (the host device knows its size).
                args_size = [0, 8, 23][self.r.pick(3)];
                errors.push(OL_ERRC_INVALID_ARGUMENT);
            }
            _ => {}
        }
        let expect = if errors.is_empty() {
            Expect::Ok
        } else {
            // Which of several mistakes is reported first is the library's choice.
            Expect::AnyOf(vec![
                OL_ERRC_INVALID_QUEUE,
                OL_ERRC_INVALID_ARGUMENT,
                OL_ERRC_INVALID_VALUE,
                OL_ERRC_INVALID_SIZE,
                OL_ERRC_INVALID_NULL_HANDLE,
            ])
        };
        let place = Place::Alloc(i, off);
        if errors.is_empty() {
            self.order(place, qi);
        }
        let device = self.s.device;
        let code = self.call(
            format!("olLaunchKernel({qarg:?} q, add a{i}+{off} n {n} delta {delta}, {groups}x{group_size}, args {args_size}, kernel live {kernel_live})"),
            expect,
            || {
                olLaunchKernel(queue, device, kernel, (&args as *const AddArgs).cast(), args_size, &size_args)
            },
        );
        if code != OK {
            return;
        }
        let count = n.min((groups * group_size) as usize);
        if let Some(mut data) = self.m.read(place, count * 4) {
            for k in 0..count {
                let v = i32::from_ne_bytes(data[k * 4..k * 4 + 4].try_into().unwrap());
                data[k * 4..k * 4 + 4].copy_from_slice(&v.wrapping_add(delta).to_ne_bytes());
            }
            self.m.write(place, &data);
        }
        self.after(place, qi);
        if qi.is_some() {
            self.m.allocs[i].kernel_pending = true;
        }
    }

    fn host_function(&mut self) {
        let (queue, qi, qarg) = self.queue_arg(true);
        let expect = qarg.expect();
        let counter = host_calls() as *const AtomicU64 as *mut c_void;
        let no_callback = self.r.pick(8) == 0;
        let expect = if no_callback && qarg == QueueArg::Live {
            Expect::Code(OL_ERRC_INVALID_NULL_POINTER)
        } else if no_callback {
            Expect::AnyOf(vec![
                OL_ERRC_INVALID_NULL_POINTER,
                OL_ERRC_INVALID_NULL_HANDLE,
                OL_ERRC_INVALID_QUEUE,
            ])
        } else {
            expect
        };
        let cb: ol_host_function_cb_t = if no_callback { None } else { Some(bump) };
        if self.call(
            format!("olLaunchHostFunction({qarg:?}, callback {})", !no_callback),
            expect,
            || olLaunchHostFunction(queue, cb, counter),
        ) == OK
        {
            self.m.host_calls_expected += 1;
            if let Some(q) = qi {
                self.m.queues[q].busy = true;
            }
        }
    }

    /// An info query of a device, queue or event, through its `*Size` twin first: the
    /// size it answers decides what the value query must answer.
    fn info(&mut self) {
        let prop = match self.r.pick(4) {
            0 => 0x10000 + self.r.pick(4) as u32,
            1 => self.r.byte() as u32,
            _ => self.r.pick(40) as u32,
        };
        let which = self.r.pick(3);
        let (size_fn, value_fn, name): (SizeQuery, ValueQuery, String) = match which {
            0 => {
                let d = if self.r.pick(2) == 0 {
                    self.s.device
                } else {
                    self.s.host
                };
                (
                    Box::new(move |out| olGetDeviceInfoSize(d, prop, out)),
                    Box::new(move |n, v| olGetDeviceInfo(d, prop, n, v)),
                    format!("device info {prop:#x}"),
                )
            }
            1 => {
                let (q, _, qarg) = self.queue_arg(false);
                if qarg != QueueArg::Live {
                    self.call(
                        format!("olGetQueueInfo({qarg:?})"),
                        Expect::Code(OL_ERRC_INVALID_QUEUE),
                        || {
                            let mut v = [0u8; 64];
                            olGetQueueInfo(q, prop, 64, v.as_mut_ptr().cast())
                        },
                    );
                    return;
                }
                (
                    Box::new(move |out| olGetQueueInfoSize(q, prop, out)),
                    Box::new(move |n, v| olGetQueueInfo(q, prop, n, v)),
                    format!("queue info {prop:#x}"),
                )
            }
            _ => {
                let Some(e) = self.m.events.get(self.r.pick(self.m.events.len().max(1))) else {
                    return;
                };
                let (h, live) = (e.handle, e.live);
                if !live {
                    self.call(
                        "olGetEventInfo(stale)".into(),
                        Expect::Code(OL_ERRC_INVALID_EVENT),
                        || {
                            let mut v = [0u8; 64];
                            olGetEventInfo(h, prop, 64, v.as_mut_ptr().cast())
                        },
                    );
                    return;
                }
                (
                    Box::new(move |out| olGetEventInfoSize(h, prop, out)),
                    Box::new(move |n, v| olGetEventInfo(h, prop, n, v)),
                    format!("event info {prop:#x}"),
                )
            }
        };
        let mut needed = 0usize;
        let code = self.call(format!("{name}: size"), Expect::Anything, || {
            size_fn(&mut needed)
        });
        if code != OK && ![OL_ERRC_INVALID_ENUMERATION, OL_ERRC_UNSUPPORTED].contains(&code) {
            self.finding(format!("{name}: its size query answered {code}"));
        }
        let mut buf = vec![0u8; 512];
        let (n, expect) = match self.r.pick(4) {
            _ if code != OK => (64, Expect::Code(code)),
            0 if needed > 0 => (needed - 1, Expect::Code(OL_ERRC_INVALID_SIZE)),
            1 => (needed + 64, Expect::Ok),
            _ => (needed, Expect::Ok),
        };
        if n > buf.len() {
            return;
        }
        let v = buf.as_mut_ptr();
        self.call(format!("{name}: value in {n} bytes"), expect, || {
            value_fn(n, v.cast())
        });
        if self.r.pick(8) == 0 {
            let expect = if code == OK {
                Expect::Code(OL_ERRC_INVALID_NULL_POINTER)
            } else {
                Expect::AnyOf(vec![
                    OL_ERRC_INVALID_NULL_POINTER,
                    OL_ERRC_INVALID_ENUMERATION,
                    OL_ERRC_UNSUPPORTED,
                ])
            };
            let n = if code == OK { needed } else { 64 };
            self.call(format!("{name}: NULL value"), expect, || {
                value_fn(n, null_mut())
            });
        }
    }

    fn mem_info(&mut self) {
        if self.m.allocs.is_empty() {
            return;
        }
        let i = self.r.pick(self.m.allocs.len());
        let (ptr, size) = (self.m.allocs[i].ptr, self.m.allocs[i].size);
        let inner = if size > 1 {
            self.r.u16() as usize % size
        } else {
            0
        };
        let at = ptr + inner;
        // A freed allocation's memory may be another's now (the pool hands it out again).
        let holder = self
            .m
            .allocs
            .iter()
            .find(|a| a.live && at >= a.ptr && at - a.ptr < a.size)
            .map(|a| (a.ptr, a.size));
        let expect = if holder.is_some() {
            Expect::Ok
        } else {
            Expect::Code(OL_ERRC_NOT_FOUND)
        };
        let mut base = 0usize;
        if self.call(format!("olGetMemInfo(a{i}+{inner}, BASE)"), expect, || {
            olGetMemInfo(
                at as *mut c_void,
                OL_MEM_INFO_BASE,
                8,
                (&mut base as *mut usize).cast(),
            )
        }) != OK
        {
            return;
        }
        let (want_base, want_size) = holder.expect("found");
        let mut got = 0usize;
        self.call(
            format!("olGetMemInfo(a{i}+{inner}, SIZE)"),
            Expect::Ok,
            || {
                olGetMemInfo(
                    at as *mut c_void,
                    OL_MEM_INFO_SIZE,
                    8,
                    (&mut got as *mut usize).cast(),
                )
            },
        );
        if (base, got) != (want_base, want_size) {
            self.finding(format!(
                "olGetMemInfo of {at:#x}: base {base:#x} size {got}, the model says {want_base:#x} and {want_size}"
            ));
        }
    }

    /// Loads, breaks and destroys programs: the kernel image, cut short, made up.
    fn program(&mut self) {
        let device = self.s.device;
        match self.r.pick(5) {
            0 => {
                self.load_program();
            }
            1 => {
                // A prefix of the image, or bytes that are no image.
                let len = self.s.image.len();
                let cut = self.r.u16() as usize % len.min(4096);
                let bytes: Vec<u8> = if self.r.pick(2) == 0 {
                    self.s.image[..cut].to_vec()
                } else {
                    (0..cut).map(|_| self.r.byte()).collect()
                };
                let mut p: ol_program_handle_t = null_mut();
                let expect = if bytes.is_empty() {
                    Expect::AnyOf(vec![
                        OL_ERRC_INVALID_SIZE,
                        OL_ERRC_INVALID_BINARY,
                        OL_ERRC_INVALID_NULL_POINTER,
                    ])
                } else {
                    Expect::Code(OL_ERRC_INVALID_BINARY)
                };
                self.call(
                    format!("olCreateProgram({} bad bytes)", bytes.len()),
                    expect,
                    || olCreateProgram(device, bytes.as_ptr().cast(), bytes.len(), &mut p),
                );
            }
            2 => {
                let Some(i) = self.a_program() else { return };
                let p = self.m.programs[i].handle;
                let (name, kind, expect) = match self.r.pick(3) {
                    0 => (
                        c"nope",
                        OL_SYMBOL_KIND_KERNEL,
                        Expect::Code(OL_ERRC_NOT_FOUND),
                    ),
                    1 => (c"add", 77, Expect::Code(OL_ERRC_INVALID_ENUMERATION)),
                    _ => (
                        c"nap",
                        OL_SYMBOL_KIND_GLOBAL_VARIABLE,
                        Expect::AnyOf(vec![OL_ERRC_SYMBOL_KIND, OL_ERRC_NOT_FOUND]),
                    ),
                };
                let mut s: ol_symbol_handle_t = null_mut();
                self.call(
                    format!("olGetSymbol(p{i}, {name:?}, kind {kind})"),
                    expect,
                    || olGetSymbol(p, name.as_ptr(), kind, &mut s),
                );
            }
            _ => {
                // Destroy a program, perhaps with launches of its kernel still queued.
                if self.m.programs.is_empty() {
                    return;
                }
                let i = self.r.pick(self.m.programs.len());
                let (h, live) = (self.m.programs[i].handle, self.m.programs[i].live);
                let expect = live_or(live, OL_ERRC_INVALID_ARGUMENT);
                self.call(format!("olDestroyProgram(p{i})"), expect, || {
                    olDestroyProgram(h)
                });
                self.m.programs[i].live = false;
            }
        }
    }

    /// Reads an allocation or a host buffer back and compares it with the model.
    fn verify(&mut self) {
        let live = self.m.live_allocs();
        if !live.is_empty() && self.r.pick(3) != 0 {
            let i = live[self.r.pick(live.len())];
            self.verify_alloc(i);
        } else if !self.m.hosts.is_empty() {
            let i = self.r.pick(self.m.hosts.len());
            self.verify_host(i);
        }
    }

    fn verify_alloc(&mut self, i: usize) {
        let Some(expected) = self.m.allocs[i].bytes.clone() else {
            return;
        };
        self.settle(self.m.allocs[i].pending);
        let mut got = vec![0u8; expected.len()];
        let (ptr, device, host) = (self.m.allocs[i].ptr, self.s.device, self.s.host);
        let n = got.len();
        self.call(format!("olMemcpy(read back a{i}, {n})"), Expect::Ok, || {
            olMemcpy(
                null_mut(),
                got.as_mut_ptr().cast(),
                host,
                ptr as *const c_void,
                device,
                n,
            )
        });
        if got != expected {
            let k = first_difference(&got, &expected);
            self.finding(format!(
                "a{i} differs from the model at byte {k}: {} expected, {} read",
                expected[k], got[k]
            ));
        }
    }

    fn verify_host(&mut self, i: usize) {
        self.settle(self.m.hosts[i].pending);
        let h = &self.m.hosts[i];
        if h.mem != h.model {
            let k = first_difference(&h.mem, &h.model);
            let (want, found) = (h.model[k], h.mem[k]);
            self.finding(format!(
                "host buffer {i} differs from the model at byte {k}: {want} expected, {found} found"
            ));
        }
    }

    fn host_buffer(&mut self) {
        if self.m.hosts.len() >= MAX_HOSTS {
            return;
        }
        let size = 1 + self.r.u16() as usize % 4096;
        let seed = self.r.byte();
        let period: Vec<u8> = (0..=255u8).map(|k| k ^ seed).collect();
        let mem = repeated(&period, size);
        self.m.hosts.push(HostBuf {
            model: mem.clone(),
            mem,
            pending: Pending::None,
        });
    }

    /// A second thread works on objects of its own while this one goes on: a queue,
    /// memory filled and copied back, checked, freed; and the queue it destroyed is then
    /// refused.
    fn second_thread(&mut self) {
        let size = 1 + self.r.u16() as usize % 8192;
        let byte = self.r.byte();
        let rounds = 1 + self.r.pick(4);
        let (device, host) = (self.s.device as usize, self.s.host as usize);
        let worker = std::thread::spawn(move || {
            let (device, host) = (device as ol_device_handle_t, host as ol_device_handle_t);
            let ok = |r: ol_result_t, what: &str| {
                assert!(
                    r.is_null(),
                    "api fuzz finding: second thread: {what}: {}",
                    details_of(r)
                );
            };
            for round in 0..rounds {
                let mut q: ol_queue_handle_t = null_mut();
                ok(olCreateQueue(device, &mut q), "olCreateQueue");
                let mut p: *mut c_void = null_mut();
                ok(
                    olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, size, &mut p),
                    "olMemAlloc",
                );
                let value = byte.wrapping_add(round as u8);
                ok(
                    olMemFill(q, p, 1, (&value as *const u8).cast(), size),
                    "olMemFill",
                );
                let mut back = vec![0u8; size];
                ok(
                    olMemcpy(q, back.as_mut_ptr().cast(), host, p, device, size),
                    "olMemcpy",
                );
                ok(olSyncQueue(q), "olSyncQueue");
                assert!(
                    back == vec![value; size],
                    "api fuzz finding: second thread read back other bytes"
                );
                ok(olMemFree(p), "olMemFree");
                ok(olDestroyQueue(q), "olDestroyQueue");
                assert_eq!(
                    code_of(olSyncQueue(q)),
                    OL_ERRC_INVALID_QUEUE,
                    "api fuzz finding: second thread: a destroyed queue was accepted"
                );
                // (Freeing `p` again could free the other thread's new allocation there:
                // the pool hands addresses out again. One past it is never a start.)
                let inside = (p as usize + 1) as *mut c_void;
                assert_eq!(
                    code_of(olMemFree(inside)),
                    OL_ERRC_INVALID_ARGUMENT,
                    "api fuzz finding: second thread: an interior pointer was freed"
                );
            }
        });
        // This thread goes on meanwhile with a few operations of its own.
        for _ in 0..1 + self.r.pick(6) {
            if self.r.done() {
                break;
            }
            match self.r.pick(4) {
                0 => self.alloc(),
                1 => self.copy(),
                2 => self.fill(),
                _ => self.launch(),
            }
        }
        if let Err(e) = worker.join() {
            std::panic::resume_unwind(e);
        }
    }

    /// NULL handles and out-pointers to calls that take them.
    fn null_arguments(&mut self) {
        let device = self.s.device;
        match self.r.pick(6) {
            0 => {
                let mut p: *mut c_void = null_mut();
                self.call(
                    "olMemAlloc(NULL device)".into(),
                    Expect::Code(OL_ERRC_INVALID_NULL_HANDLE),
                    || olMemAlloc(null_mut(), OL_ALLOC_TYPE_DEVICE, 64, &mut p),
                );
            }
            1 => {
                self.call(
                    "olMemAlloc(NULL out)".into(),
                    Expect::Code(OL_ERRC_INVALID_NULL_POINTER),
                    || olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 64, null_mut()),
                );
            }
            2 => {
                self.call(
                    "olCreateQueue(NULL out)".into(),
                    Expect::Code(OL_ERRC_INVALID_NULL_POINTER),
                    || olCreateQueue(device, null_mut()),
                );
            }
            3 => {
                let mut q: ol_queue_handle_t = null_mut();
                self.call(
                    "olCreateQueue(made-up device)".into(),
                    Expect::Code(OL_ERRC_INVALID_DEVICE),
                    || olCreateQueue(made_up::<ol_device_impl_t>(), &mut q),
                );
            }
            4 => {
                self.call(
                    "olDestroyEvent(NULL)".into(),
                    Expect::Code(OL_ERRC_INVALID_NULL_HANDLE),
                    || olDestroyEvent(null_mut()),
                );
            }
            _ => {
                self.call(
                    "olGetMemInfo(NULL out)".into(),
                    Expect::AnyOf(vec![OL_ERRC_INVALID_NULL_POINTER, OL_ERRC_NOT_FOUND]),
                    || olGetMemInfo(0x40 as *mut c_void, OL_MEM_INFO_BASE, 8, null_mut()),
                );
            }
        }
    }

    /// The end of an input: every queue's work done, every modelled byte checked, every
    /// object destroyed.
    fn finish(&mut self) {
        for i in 0..self.m.queues.len() {
            if self.m.queues[i].live {
                self.settle(Pending::Queue(i));
            }
        }
        // Work of destroyed queues: each event once (settling marks all it stands for).
        while let Some(&e) = self.m.orphans.first() {
            self.settle(Pending::Event(e));
        }
        for i in 0..self.m.allocs.len() {
            if self.m.allocs[i].live {
                self.verify_alloc(i);
                let ptr = self.m.allocs[i].ptr;
                self.call(format!("olMemFree(a{i}) at the end"), Expect::Ok, || {
                    olMemFree(ptr as *mut c_void)
                });
                self.m.allocs[i].live = false;
            }
        }
        for i in 0..self.m.hosts.len() {
            self.verify_host(i);
        }
        for i in 0..self.m.queues.len() {
            if self.m.queues[i].live {
                let q = self.m.queues[i].handle;
                self.call(
                    format!("olDestroyQueue(q{i}) at the end"),
                    Expect::Ok,
                    || olDestroyQueue(q),
                );
            }
        }
        for i in 0..self.m.events.len() {
            if self.m.events[i].live {
                let e = self.m.events[i].handle;
                self.call(
                    format!("olDestroyEvent(e{i}) at the end"),
                    Expect::Ok,
                    || olDestroyEvent(e),
                );
            }
        }
        for i in 0..self.m.programs.len() {
            if self.m.programs[i].live {
                let p = self.m.programs[i].handle;
                self.call(
                    format!("olDestroyProgram(p{i}) at the end"),
                    Expect::Ok,
                    || olDestroyProgram(p),
                );
            }
        }
        // Nothing of this input is left: its memory is unknown to liboffload now.
        for a in &self.m.allocs {
            let mut base = 0usize;
            let r = olGetMemInfo(
                a.ptr as *mut c_void,
                OL_MEM_INFO_BASE,
                8,
                (&mut base as *mut usize).cast(),
            );
            assert_eq!(
                code_of(r),
                OL_ERRC_NOT_FOUND,
                "api fuzz finding: freed memory {:#x} still known",
                a.ptr
            );
        }
    }
}

/// An info query's `*Size` twin, and the query itself.
type SizeQuery = Box<dyn Fn(*mut usize) -> ol_result_t>;
type ValueQuery = Box<dyn Fn(usize, *mut c_void) -> ol_result_t>;

#[derive(Clone, Copy, Debug, PartialEq)]
enum QueueArg {
    Null,
    Stale,
    Live,
}

impl QueueArg {
    /// What a call that takes this queue (and nothing else wrong) must answer.
    fn expect(self) -> Expect {
        match self {
            QueueArg::Live => Expect::Ok,
            QueueArg::Null => Expect::Code(OL_ERRC_INVALID_NULL_HANDLE),
            QueueArg::Stale => Expect::Code(OL_ERRC_INVALID_QUEUE),
        }
    }
}

/// Success for a live handle, `stale` for one destroyed.
fn live_or(live: bool, stale: u32) -> Expect {
    if live {
        Expect::Ok
    } else {
        Expect::Code(stale)
    }
}

/// A handle no call made: the address of a static the library never handed out.
fn made_up<T>() -> *mut T {
    static NOT_A_HANDLE: [u64; 8] = [0xdead_beef; 8];
    NOT_A_HANDLE.as_ptr() as *mut T
}

/// The expectation from the mistakes a call makes: success without any (or where a
/// zero-size call does nothing), otherwise any one of them.
fn expect_from(errors: &[u32], zero_size: bool) -> Expect {
    let codes: Vec<u32> = errors
        .iter()
        .copied()
        .chain(zero_size.then_some(OK))
        .collect();
    match codes.as_slice() {
        [] => Expect::Ok,
        [one] => Expect::Code(*one),
        _ => Expect::AnyOf(codes),
    }
}

/// Where two byte strings of one length first differ (compared whole first: a slice
/// comparison is one `memcmp`, uninstrumented).
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len())
}

/// `pattern` repeated to `len` bytes, by whole copies: per-byte work in the harness would
/// be most of a coverage-instrumented fuzzer's time.
fn repeated(pattern: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len && !pattern.is_empty() {
        let n = (len - out.len()).min(pattern.len());
        out.extend_from_slice(&pattern[..n]);
    }
    out
}
