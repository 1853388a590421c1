//! A kernel that faults on this server's host device (a bad pointer, a division by
//! zero) ends the process, as on the application's own host device. Here the
//! application must hear why, not just that the server went silent: the signal's
//! handler hands the signal and address to a thread of its own through a pipe (all it
//! may do there) and waits; that thread answers every request still waiting for an
//! answer with `Reply::Ended` (the application then takes the server for lost, with
//! these words) and ends the process. Should that thread not manage (the fault left a
//! lock held that it needs), an alarm ends the process within `ALARM_SECONDS`.

use offload::plugins::remote::wire::Reply;
use offload_remote_mpi::transport::Transport;
use parking_lot::Mutex;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// The pipe's writing end, for the handler (-1 until the reporter runs).
static REPORT: AtomicI32 = AtomicI32::new(-1);

/// How long the reporter has before the process ends anyway.
const ALARM_SECONDS: u32 = 3;

/// The signals a faulting kernel raises.
const FAULTS: [c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE];

/// The tags of the exchanges this server has not answered yet (the one being served,
/// queues' syncs being waited for): where the news of a fault goes.
#[derive(Default)]
pub struct OpenTags(Mutex<Vec<i32>>);

impl OpenTags {
    pub fn open(&self, tag: i32) {
        self.0.lock().push(tag);
    }

    pub fn close(&self, tag: i32) {
        let mut tags = self.0.lock();
        if let Some(at) = tags.iter().position(|&t| t == tag) {
            tags.swap_remove(at);
        }
    }
}

/// What the handler sends: the signal, then the faulting address.
const MESSAGE: usize = 12;

extern "C" fn on_fault(signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
    let fd = REPORT.load(Ordering::Acquire);
    // SAFETY: only async-signal-safe calls: alarm, write, signal, raise, pause.
    unsafe {
        if fd < 0 {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
            return;
        }
        libc::alarm(ALARM_SECONDS);
        let address = if info.is_null() {
            0
        } else {
            (*info).si_addr() as u64
        };
        let mut message = [0u8; MESSAGE];
        message[..4].copy_from_slice(&signal.to_le_bytes());
        message[4..].copy_from_slice(&address.to_le_bytes());
        libc::write(fd, message.as_ptr().cast(), MESSAGE);
        loop {
            libc::pause();
        }
    }
}

fn signal_name(signal: c_int) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV (an invalid memory access)",
        libc::SIGBUS => "SIGBUS (a misaligned or missing memory access)",
        libc::SIGILL => "SIGILL (an illegal instruction)",
        libc::SIGFPE => "SIGFPE (an arithmetic fault, such as an integer division by zero)",
        _ => "a fatal signal",
    }
}

/// Starts the reporter and installs the handlers. Without them (no pipe, no thread) a
/// fault ends the process at once, as before, and the application notices the silence.
pub fn watch(transport: &Arc<Transport>, app: i32, open: Arc<OpenTags>) {
    let mut ends = [0 as c_int; 2];
    // SAFETY: pipe2 fills `ends` with two new descriptors.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_end, write_end] = ends;
    let rank = transport.rank();
    // Not a strong reference: MPI is finalised when the server's last one goes, and
    // this thread waits for ever.
    let transport = Arc::downgrade(transport);
    let report = move || {
        let mut message = [0u8; MESSAGE];
        // SAFETY: reads into our buffer from our pipe (blocking until a fault).
        let n = unsafe { libc::read(read_end, message.as_mut_ptr().cast(), MESSAGE) };
        if n != MESSAGE as isize {
            return;
        }
        let signal = c_int::from_le_bytes(message[..4].try_into().expect("4 bytes"));
        let address = u64::from_le_bytes(message[4..].try_into().expect("8 bytes"));
        let details = format!(
            "device code faulted with {} at address {address:#x}; the server ended",
            signal_name(signal)
        );
        eprintln!("offload-mpi-device: rank {rank}: {details}");
        let reply = Reply::Ended { details }.encode();
        if let Some(transport) = transport.upgrade() {
            for tag in open.0.lock().iter() {
                let _ = transport.send(app, *tag, &reply);
            }
        }
        super::lifetime::leave(4);
    };
    if std::thread::Builder::new()
        .name("offload-mpi-fault".into())
        .spawn(report)
        .is_err()
    {
        return;
    }
    REPORT.store(write_end, Ordering::Release);
    for signal in FAULTS {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler is an
        // extern "C" function of the SA_SIGINFO kind.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
