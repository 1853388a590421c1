//! What device code prints, for the application. A kernel on the application's own host
//! device prints into the application's standard output, in order with the program's
//! own lines; on a server it would print into the server's, which mpirun forwards on a
//! channel of its own, in no order with the application's. So the server's standard
//! output is a memory file: after each request that ran device code, what landed there
//! goes back with the reply, and the application writes it where the host device would
//! have. (`OFFLOAD_MPI_DEVICE_OUTPUT=server` leaves the server's output where it is.)
//!
//! Looking must cost a launch no system call: the file is a sparse window this process
//! also maps, written from offset 0 on (descriptor 1's own offset), so a byte that is
//! not zero at the offset read so far says there is more; only then is the offset
//! asked for. Read bytes are freed (a hole punched), never cut off: a writer still
//! running keeps its place, and nothing it writes is lost.

use offload::plugins::remote::wire::Reply;
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

extern "C" {
    /// The C library's standard output stream.
    static mut stdout: *mut libc::FILE;
    /// How many bytes a stream holds in its buffer, not written yet (glibc, musl).
    fn __fpending(stream: *mut libc::FILE) -> libc::size_t;
}

/// The size of the C `stdout` buffer while output is captured.
const BUFFER: usize = 1 << 20;

/// The mapped window of the file (address space only; pages exist where written).
/// Output past it is still read, found by the offset at `everything`'s look.
const WINDOW: usize = 16 << 30;

/// Where the window is asked to go: far from where a process's own mappings go (the
/// top-down mmap area below the stack, the heap above the program). An application's
/// remote memory, and a record's on replay, must be placed at the application's own
/// addresses on the server; a 16 GiB window among the server's libraries took such an
/// address in about one job in 60 (16 GiB of the 1 TiB the mmap area's start is
/// randomised over: "address ... is taken here").
const WINDOW_AT: usize = 0x2000_0000_0000;

pub struct Capture {
    file: OwnedFd,
    window: *const u8,
    /// How far the file was read (one reader at a time: the main loop and a queue's
    /// waiter may both take).
    read: Mutex<u64>,
}

// SAFETY: the window is read-only memory of this process for its whole life; reads go
// through `read`'s lock.
unsafe impl Send for Capture {}
// SAFETY: as above.
unsafe impl Sync for Capture {}

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
        // SAFETY: sizes our own file (sparse: no memory until written).
        if unsafe { libc::ftruncate(fd, WINDOW as libc::off_t) } != 0 {
            return None;
        }
        // SAFETY: a shared read-only mapping of our file at `WINDOW_AT` if that range is
        // free (MAP_FIXED_NOREPLACE never replaces a mapping; a kernel before 4.17 takes
        // the address as a hint), else anywhere.
        let map = |at: usize, fixed: libc::c_int| unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                WINDOW,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_NORESERVE | fixed,
                fd,
                0,
            )
        };
        let mut window = map(WINDOW_AT, libc::MAP_FIXED_NOREPLACE);
        if window == libc::MAP_FAILED {
            window = map(0, 0);
        }
        if window == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the C library's buffered output first goes where it was meant to; then
        // descriptor 1 becomes the memory file (dup2 closes the old one); then the
        // stream gets a buffer that large (allowed before anything is printed to it).
        let ready = unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::dup2(fd, 1) == 1
                && libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOFBF, BUFFER) == 0
        };
        if !ready {
            // SAFETY: the mapping made above, unused.
            unsafe { libc::munmap(window, WINDOW) };
            return None;
        }
        Some(Capture {
            file,
            window: window as *const u8,
            read: Mutex::new(0),
        })
    }

    /// What was printed since the last call. `everything` (the exit): also output that
    /// begins with a zero byte, or lies past the window.
    pub fn take(&self, everything: bool) -> Vec<u8> {
        // SAFETY: `__fpending` only reads the stream's buffer pointers; fflush writes
        // the buffer into the file.
        unsafe {
            if __fpending(stdout) > 0 {
                libc::fflush(stdout);
            }
        }
        let mut read = self.read.lock();
        let start = *read as usize;
        // SAFETY: `start` lies inside the mapped window.
        let more = start < WINDOW && unsafe { *self.window.add(start) } != 0;
        if !more && !everything {
            return Vec::new();
        }
        let fd = self.file.as_raw_fd();
        // SAFETY: the offset of our descriptor (shared with descriptor 1): where the
        // next write goes, so the end of what was written.
        let end = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        let end = usize::try_from(end).unwrap_or(0);
        if end <= start {
            return Vec::new();
        }
        let mut taken = vec![0u8; end - start];
        let in_window = end.min(WINDOW).saturating_sub(start);
        if in_window > 0 {
            // SAFETY: inside the mapped window, and written (below the offset).
            let written = unsafe { std::slice::from_raw_parts(self.window.add(start), in_window) };
            taken[..in_window].copy_from_slice(written);
        }
        let mut at = start + in_window;
        while at < end {
            // SAFETY: reads into our buffer from our descriptor at offset `at`.
            let n = unsafe {
                libc::pread(
                    fd,
                    taken[at - start..].as_mut_ptr().cast(),
                    end - at,
                    at as libc::off_t,
                )
            };
            if n <= 0 {
                break;
            }
            at += n as usize;
        }
        taken.truncate(at - start);
        *read = at as u64;
        // SAFETY: frees the memory of bytes already read; offsets and size stay.
        unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                0,
                at as libc::off_t,
            )
        };
        taken
    }

    /// `reply`, with what device code printed since the last reply in front of it.
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
