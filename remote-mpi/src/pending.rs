//! Non-blocking MPI sends and receives of bytes, driven by hand (`MPI_Test`), so that
//! every wait can end: a request that makes no progress is abandoned, never waited for.
//! rsmpi's own requests cannot be abandoned (a scope aborts the process when one is left
//! open), hence these raw calls.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// How long an abandoned receive is given to take its cancellation.
const CANCEL_GRACE: Duration = Duration::from_millis(50);

/// One send or receive in flight.
pub struct Pending {
    request: ffi::MPI_Request,
    receive: bool,
    /// Bytes received, once complete (sends: the length sent).
    done: Option<usize>,
    len: usize,
}

// SAFETY: MPI runs with MPI_THREAD_MULTIPLE (the transport refuses less), so a request
// may be tested from any thread.
unsafe impl Send for Pending {}

/// What became of an abandoned request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandoned {
    /// Cancelled or complete: MPI no longer touches its buffer.
    Released,
    /// Still in MPI's hands (a send cannot be cancelled, a matched receive neither):
    /// MPI may still read (send) or write (receive) its buffer.
    StillInUse,
}

fn check(what: &str, code: i32) -> Result<(), String> {
    if code == ffi::MPI_SUCCESS as i32 {
        Ok(())
    } else {
        Err(format!("{what} failed (MPI error {code})"))
    }
}

fn count(len: usize) -> Result<i32, String> {
    i32::try_from(len).map_err(|_| format!("{len} bytes do not fit one MPI message"))
}

impl Pending {
    /// A request that `start` posts (it fills in the handle and answers MPI's code).
    fn post(
        what: &str,
        receive: bool,
        len: usize,
        start: impl FnOnce(*mut ffi::MPI_Request) -> c_int,
    ) -> Result<Pending, String> {
        // SAFETY: the MPI_REQUEST_NULL constant.
        let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
        check(what, start(&mut request))?;
        Ok(Pending {
            request,
            receive,
            done: None,
            len,
        })
    }

    /// Posts a send of `data` to `dest`.
    ///
    /// # Safety
    /// `data` stays readable until the request completes or is abandoned (and, if
    /// abandoned as `StillInUse`, for as long as MPI may read it).
    pub unsafe fn send(
        comm: &SimpleCommunicator,
        dest: i32,
        tag: i32,
        data: &[u8],
    ) -> Result<Pending, String> {
        let n = count(data.len())?;
        Pending::post("MPI_Isend", false, data.len(), |request| {
            // SAFETY: a live buffer of `n` bytes (the caller keeps it), a valid
            // communicator, a writable request.
            unsafe {
                ffi::MPI_Isend(
                    data.as_ptr().cast::<c_void>(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    dest,
                    tag,
                    comm.as_raw(),
                    request,
                )
            }
        })
    }

    /// Posts a receive of at most `buffer.len()` bytes from `source`.
    ///
    /// # Safety
    /// `buffer` stays writable and unused by anyone else until the request completes or
    /// is abandoned (and, if abandoned as `StillInUse`, for as long as MPI may write it).
    pub unsafe fn receive(
        comm: &SimpleCommunicator,
        source: i32,
        tag: i32,
        buffer: &mut [u8],
    ) -> Result<Pending, String> {
        let n = count(buffer.len())?;
        Pending::post("MPI_Irecv", true, buffer.len(), |request| {
            // SAFETY: as for `send`, the buffer writable.
            unsafe {
                ffi::MPI_Irecv(
                    buffer.as_mut_ptr().cast::<c_void>(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    source,
                    tag,
                    comm.as_raw(),
                    request,
                )
            }
        })
    }

    /// Receives the message `probe` matched into `buffer` (its whole length).
    ///
    /// # Safety
    /// As `receive`; `message` is a matched message not received yet.
    pub unsafe fn receive_matched(
        mut message: ffi::MPI_Message,
        buffer: &mut [u8],
    ) -> Result<Pending, String> {
        let n = count(buffer.len())?;
        Pending::post("MPI_Imrecv", true, buffer.len(), |request| {
            // SAFETY: a matched message and a writable buffer of its size.
            unsafe {
                ffi::MPI_Imrecv(
                    buffer.as_mut_ptr().cast::<c_void>(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    &mut message,
                    request,
                )
            }
        })
    }

    /// The bytes it moved once complete (tests it when not yet known).
    pub fn test(&mut self) -> Result<Option<usize>, String> {
        if self.done.is_some() {
            return Ok(self.done);
        }
        let mut flag = 0;
        // SAFETY: plain data MPI fills in.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: our live request; writable flag and status.
        check("MPI_Test", unsafe {
            ffi::MPI_Test(&mut self.request, &mut flag, &mut status)
        })?;
        if flag == 0 {
            return Ok(None);
        }
        let moved = if self.receive {
            size_of(&status)?
        } else {
            self.len
        };
        self.done = Some(moved);
        Ok(self.done)
    }

    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }

    /// Whether it receives (a send's completion may be MPI's alone, no word of the
    /// peer's).
    pub fn is_receive(&self) -> bool {
        self.receive
    }

    /// The bytes it was posted for.
    pub fn posted(&self) -> usize {
        self.len
    }

    /// The bytes it moved, once complete.
    pub fn moved(&self) -> Option<usize> {
        self.done
    }

    /// Gives the request up: a receive is cancelled (given a moment to take it); what
    /// MPI still holds is freed to it, never waited for.
    pub fn abandon(mut self) -> Abandoned {
        if self.done.is_some() {
            return Abandoned::Released;
        }
        if self.receive {
            // SAFETY: our live request.
            unsafe { ffi::MPI_Cancel(&mut self.request) };
            let until = Instant::now() + CANCEL_GRACE;
            while Instant::now() < until {
                match self.test() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) => std::thread::sleep(Duration::from_micros(200)),
                }
            }
            if self.done.is_some() {
                return Abandoned::Released;
            }
        }
        // SAFETY: our live request, handed to MPI to finish on its own.
        unsafe { ffi::MPI_Request_free(&mut self.request) };
        Abandoned::StillInUse
    }
}

/// Receives the matched message `message` into `buffer` (its whole length) at once:
/// only for a message that came whole with its match (see `WHOLE_ON_ARRIVAL`).
///
/// # Safety
/// `message` is a matched message not received yet, of `buffer.len()` bytes.
pub unsafe fn receive_matched_now(
    mut message: ffi::MPI_Message,
    buffer: &mut [u8],
) -> Result<(), String> {
    // SAFETY: plain data MPI fills in.
    let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: a matched message and a writable buffer of its size.
    check("MPI_Mrecv", unsafe {
        ffi::MPI_Mrecv(
            buffer.as_mut_ptr().cast::<c_void>(),
            count(buffer.len())?,
            ffi::RSMPI_UINT8_T,
            &mut message,
            &mut status,
        )
    })
}

/// The size in bytes of the message `status` describes.
fn size_of(status: &ffi::MPI_Status) -> Result<usize, String> {
    let mut size = 0;
    // SAFETY: the status of a matched message; a writable count.
    check("MPI_Get_count", unsafe {
        ffi::MPI_Get_count(status, ffi::RSMPI_UINT8_T, &mut size)
    })?;
    Ok(usize::try_from(size).unwrap_or(0))
}

/// A message from `source` with `tag`, if one has come: (its matched handle, its size).
pub fn probe(
    comm: &SimpleCommunicator,
    source: i32,
    tag: i32,
) -> Result<Option<(ffi::MPI_Message, usize)>, String> {
    let mut flag = 0;
    // SAFETY: the MPI_MESSAGE_NULL constant.
    let mut message = unsafe { ffi::RSMPI_MESSAGE_NULL };
    // SAFETY: plain data MPI fills in.
    let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: a valid communicator; writable flag, message and status.
    check("MPI_Improbe", unsafe {
        ffi::MPI_Improbe(
            source,
            tag,
            comm.as_raw(),
            &mut flag,
            &mut message,
            &mut status,
        )
    })?;
    if flag == 0 {
        return Ok(None);
    }
    Ok(Some((message, size_of(&status)?)))
}
