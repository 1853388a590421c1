//! Bulk data in fragments (see `fragments`): from the application or another server
//! into memory, and out of memory to either, with an explicit way for a server that
//! cannot go on to tell its peer so (an empty fragment) instead of leaving it waiting.

use offload::plugins::remote::fragments::{self, DEFAULT_FRAGMENT};
use offload_remote_mpi::transport::Transport;
use std::time::Duration;

/// Receives `target.len()` bytes from `source` straight into `target`.
pub fn receive(
    transport: &Transport,
    source: i32,
    tag: i32,
    timeout: Option<Duration>,
    target: &mut [u8],
) -> Result<(), String> {
    if target.is_empty() {
        return Ok(());
    }
    let fragment = DEFAULT_FRAGMENT as usize;
    transport.receive_fragments(source, tag, timeout, target, fragment)
}

/// Checks a received fragment's length; an empty one is the sender giving up.
pub fn expect_fragment(source: i32, got: usize, len: u64) -> Result<(), String> {
    match got as u64 {
        n if n == len => Ok(()),
        0 => Err(format!(
            "rank {source} stopped sending (its side of the copy failed)"
        )),
        n => Err(format!(
            "rank {source} sent a fragment of {n} bytes where {len} were expected"
        )),
    }
}

/// Sends `data` to `dest`.
pub fn send(transport: &Transport, dest: i32, tag: i32, data: &[u8]) -> Result<(), String> {
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
/// gave up, or nothing came within `timeout`.
pub fn drain(transport: &Transport, source: i32, tag: i32, timeout: Option<Duration>, size: u64) {
    for _ in fragments::pieces(size, DEFAULT_FRAGMENT) {
        match transport.receive(source, tag, timeout) {
            Ok(piece) if !piece.is_empty() => {}
            _ => return,
        }
    }
}
