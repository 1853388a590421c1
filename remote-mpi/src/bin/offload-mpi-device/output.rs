//! What device code prints, for the application. A kernel on the application's own host
//! device prints into the application's standard output, in order with the program's
//! own lines; on a server it would print into the server's, which mpirun forwards on a
//! channel of its own, in no order with the application's. So the server's standard
//! output is a memory file: after each request, what landed there goes back with the
//! reply, and the application writes it where the host device would have.
//! (`OFFLOAD_MPI_DEVICE_OUTPUT=server` leaves the server's output where it is.)

use offload::plugins::remote::wire::Reply;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use parking_lot::Mutex;

extern "C" {
    /// The C library's standard output stream.
    static mut stdout: *mut libc::FILE;
    /// How many bytes a stream holds in its buffer, not written yet (glibc, musl).
    fn __fpending(stream: *mut libc::FILE) -> libc::size_t;
}

/// The size of the C `stdout` buffer while output is captured.
const BUFFER: usize = 1 << 20;

pub struct Capture {
    file: OwnedFd,
    /// How far the file was read (one reader at a time: the main loop and a queue's
    /// waiter may both take). Read bytes are freed (a hole punched), never cut off: a
    /// writer still running keeps its place, and nothing it writes is lost.
    read: Mutex<u64>,
}

impl Capture {
    /// Makes file descriptor 1 a memory file this capture reads. `None` (output left as
    /// it is) where that is not possible or not wanted.
    pub fn start() -> Option<Capture> {
        if std::env::var("OFFLOAD_MPI_DEVICE_OUTPUT").is_ok_and(|v| v.trim() == "server") {
            return None;
        }
        // SAFETY: a NUL-terminated name; memfd_create returns a new descriptor or -1.
        let fd =
            unsafe { libc::memfd_create(c"offload-mpi-device-output".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        // Appended writes: every writer adds at the end, wherever its own offset is.
        // SAFETY: fcntl on our own descriptor.
        let appending = unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_APPEND) } == 0;
        // SAFETY: the C library's buffered output first goes where it was meant to; then
        // descriptor 1 becomes the memory file (dup2 closes the old one).
        let redirected = appending
            && unsafe {
                libc::fflush(std::ptr::null_mut());
                libc::dup2(fd, 1)
            } == 1;
        // A buffer of the C library's own, that large (before anything is printed to
        // the stream: allowed then).
        // SAFETY: `stdout` is the C library's stream; a NULL buffer lets it allocate.
        let buffered =
            unsafe { libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOFBF, BUFFER) } == 0;
        let redirected = redirected && buffered;
        redirected.then_some(Capture {
            file,
            read: Mutex::new(0),
        })
    }

    /// What was printed since the last call. Device code prints through the C
    /// `stdout` stream, whose buffer (`BUFFER` bytes) holds all of a kernel's output
    /// but the largest: when it is empty nothing was printed, and no system call is
    /// made (one every reply would cost a launch a third of its time). Output past a
    /// full buffer was written already; it goes with the next reply that has some
    /// still buffered, or with `everything`'s (the exit).
    pub fn take(&self, everything: bool) -> Vec<u8> {
        // SAFETY: `__fpending` only reads the stream's buffer pointers.
        if !everything && unsafe { __fpending(stdout) } == 0 {
            return Vec::new();
        }
        // SAFETY: flushes the C stream device code prints through.
        unsafe { libc::fflush(stdout) };
        let fd = self.file.as_raw_fd();
        let mut read = self.read.lock();
        let start = *read;
        // One system call when nothing was printed (the common case).
        // SAFETY: plain data filled by fstat on our descriptor.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is open; `stat` is writable.
        if unsafe { libc::fstat(fd, &mut stat) } == 0 && stat.st_size as u64 <= start {
            return Vec::new();
        }
        let mut taken = Vec::new();
        let mut buffer = [0u8; 64 * 1024];
        loop {
            let at = start + taken.len() as u64;
            // SAFETY: reads into our buffer at offset `at` of our descriptor.
            let n = unsafe {
                libc::pread(
                    fd,
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                    at as libc::off_t,
                )
            };
            if n <= 0 {
                break;
            }
            taken.extend_from_slice(&buffer[..n as usize]);
        }
        let end = start + taken.len() as u64;
        *read = end;
        if !taken.is_empty() {
            // SAFETY: frees the memory of bytes already read; offsets stay as they are.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    0,
                    end as libc::off_t,
                )
            };
        }
        taken
    }

    /// `reply`, with what device code printed since the last reply in front of it
    /// (`everything`: also what was written past a full buffer).
    pub fn with_output(capture: Option<&Capture>, reply: Reply, everything: bool) -> Reply {
        let output = capture.map(|c| c.take(everything)).unwrap_or_default();
        if output.is_empty() {
            return reply;
        }
        Reply::Output {
            output,
            then: Box::new(reply),
        }
    }
}
