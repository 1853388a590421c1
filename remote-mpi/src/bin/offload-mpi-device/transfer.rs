//! Bulk data in fragments (see `fragments`): from the application or another server
//! into memory, and out of memory to either, with an explicit way for a server that
//! cannot go on to tell its peer so (an empty fragment) instead of leaving it waiting.
//! Memory this process owns (its host device's) is read and written in place; any
//! other (a GPU's) goes a fragment at a time through the staging buffer, so that a
//! transfer of any size needs one fragment of memory here. Every wait is under the
//! transport's liveness rule: a peer that stops moving data ends the transfer.

use super::Server;
use offload::plugin::foundation::error::ErrorCode;
use offload::plugins::remote::fragments::{self, DEFAULT_FRAGMENT};
use offload_remote_mpi::transport::{Failure, Transport, Wait};

type Served<T> = Result<T, (ErrorCode, String)>;

fn lost(e: Failure) -> (ErrorCode, String) {
    (ErrorCode::BackendFailure, e.text)
}

fn failed(e: offload::plugin::foundation::error::Error) -> (ErrorCode, String) {
    (e.code, e.details.clone())
}

impl Server {
    /// Sends `size` bytes of `device`'s memory at `address` to rank `dest`, on the tag
    /// of the exchange being served. On failure the caller tells `dest` (`give_up`).
    pub(super) fn send_memory(
        &mut self,
        dest: i32,
        device: u32,
        address: u64,
        size: u64,
    ) -> Served<()> {
        if let Some(at) = self.memory.own_range(device, address, size) {
            // SAFETY: `own_range` found these bytes inside memory this process
            // allocated for the device; nothing writes it meanwhile.
            let data = unsafe { std::slice::from_raw_parts(at as *const u8, size as usize) };
            return send(&self.transport, dest, self.tag, data).map_err(lost);
        }
        let device = self.device(device)?.clone();
        let mut staging = self.take_staging();
        let mut in_use = false;
        let outcome = (|| {
            for (offset, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
                grow(&mut staging, len)?;
                let piece = &mut staging[..len as usize];
                let from = (address + offset) as usize;
                device
                    .copy_from_device(piece.as_mut_ptr() as usize, from, piece.len())
                    .map_err(failed)?;
                self.transport.send(dest, self.tag, piece).map_err(|e| {
                    in_use = e.buffer_in_use;
                    lost(e)
                })?;
            }
            Ok(())
        })();
        self.keep_staging(staging, in_use);
        outcome
    }

    /// Receives `size` bytes from rank `source` into `device`'s memory at `address`, on
    /// the tag of the exchange being served. Every fragment is taken even when the
    /// memory cannot be written (or is none this server handed out), so that the sender
    /// is never left waiting.
    pub(super) fn receive_memory(
        &mut self,
        source: i32,
        device: u32,
        address: u64,
        size: u64,
    ) -> Served<()> {
        if let Err(e) = self.memory.check(device, address, size) {
            drain(&self.transport, source, self.tag, size);
            return Err(e);
        }
        if let Some(at) = self.memory.own_range(device, address, size) {
            // SAFETY: `own_range` found these bytes inside memory this process
            // allocated for the device; nothing else touches it meanwhile.
            let target = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, size as usize) };
            return receive(&self.transport, source, self.tag, target).map_err(lost);
        }
        let device = match self.device(device) {
            Ok(d) => d.clone(),
            Err(e) => {
                drain(&self.transport, source, self.tag, size);
                return Err(e);
            }
        };
        let mut staging = self.take_staging();
        let mut outcome = Ok(());
        let mut in_use = false;
        for (offset, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
            if let Err(e) = grow(&mut staging, len) {
                drain(&self.transport, source, self.tag, size - offset);
                outcome = Err(e);
                break;
            }
            let piece = &mut staging[..len as usize];
            match receive(&self.transport, source, self.tag, piece) {
                Ok(()) if outcome.is_ok() => {
                    let to = (address + offset) as usize;
                    outcome = device
                        .copy_to_device(to, piece.as_ptr() as usize, piece.len())
                        .map_err(failed);
                }
                Ok(()) => {}
                Err(e) => {
                    // Nothing more comes in step: the rest is not waited for.
                    in_use = e.buffer_in_use;
                    outcome = outcome.and(Err(lost(e)));
                    break;
                }
            }
        }
        self.keep_staging(staging, in_use);
        outcome
    }

    /// The staging buffer, taken for a transfer.
    pub(super) fn take_staging(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.staging)
    }

    /// Gives the staging buffer back after a transfer, unless MPI may still write or
    /// read it (an abandoned request): then it is left to MPI for good, and the next
    /// transfer gets a new one.
    pub(super) fn keep_staging(&mut self, staging: Vec<u8>, in_use: bool) {
        if in_use {
            std::mem::forget(staging);
        } else {
            self.staging = staging;
        }
    }
}

/// Makes `buffer` at least `len` bytes long, or says that memory is short (never an
/// abort: the size comes from a request). A new buffer is zeroed memory from the
/// system, whose pages cost nothing until data lands in them.
pub fn grow(buffer: &mut Vec<u8>, len: u64) -> Served<()> {
    let short = || {
        (
            ErrorCode::OutOfResources,
            format!("no memory for a {len}-byte staging buffer"),
        )
    };
    let len = usize::try_from(len).map_err(|_| short())?;
    if buffer.len() >= len {
        return Ok(());
    }
    let layout = std::alloc::Layout::array::<u8>(len).map_err(|_| short())?;
    // SAFETY: a layout of `len` > 0 bytes (len > buffer.len() >= 0).
    let memory = unsafe { std::alloc::alloc_zeroed(layout) };
    if memory.is_null() {
        return Err(short());
    }
    // SAFETY: `len` zeroed bytes just allocated with the global allocator, u8's layout.
    *buffer = unsafe { Vec::from_raw_parts(memory, len, len) };
    Ok(())
}

/// Receives `target.len()` bytes from `source` straight into `target`, each fragment's
/// size checked before it lands (the sender's word is not trusted here).
pub fn receive(
    transport: &Transport,
    source: i32,
    tag: i32,
    target: &mut [u8],
) -> Result<(), Failure> {
    if target.is_empty() {
        return Ok(());
    }
    let fragment = DEFAULT_FRAGMENT as usize;
    transport.receive_fragments_checked(source, tag, target, fragment)
}

/// Sends `data` to `dest`.
pub fn send(transport: &Transport, dest: i32, tag: i32, data: &[u8]) -> Result<(), Failure> {
    if data.is_empty() {
        return Ok(());
    }
    transport.send_fragments(dest, tag, data, DEFAULT_FRAGMENT as usize)
}

/// Tells a peer waiting for our data that none (or no more) comes.
pub fn give_up(transport: &Transport, dest: i32, tag: i32) {
    let _ = transport.send(dest, tag, &[]);
}

/// Takes and drops what `source` sends for a transfer of `size` bytes this server
/// refused, so the conversation stays in step: until every fragment came, the sender
/// gave up, or it went silent.
pub fn drain(transport: &Transport, source: i32, tag: i32, size: u64) {
    for _ in fragments::pieces(size, DEFAULT_FRAGMENT) {
        match transport.receive(source, tag, Wait::Live) {
            Ok(piece) if !piece.is_empty() => {}
            _ => return,
        }
    }
}
