//! Copies between two servers: each serves its half (send or receive) with the other
//! server directly; the application only asks both.

use super::{transfer, Server};
use offload::plugins::remote::fragments::{self, DEFAULT_FRAGMENT};
use offload::runtime::error::ErrorCode;

impl Server {
    /// Another server rank (not this one, not the application's).
    pub(super) fn peer(&self, rank: u32) -> Result<i32, (ErrorCode, String)> {
        match i32::try_from(rank) {
            Ok(r) if r != self.app && r != self.transport.rank() && r < self.app => Ok(r),
            _ => Err((
                ErrorCode::InvalidArgument,
                format!(
                    "rank {rank} is no other server (servers are ranks 0 to {} and this is {})",
                    self.app - 1,
                    self.transport.rank()
                ),
            )),
        }
    }

    /// This server's half of a copy to another server: its memory's bytes, in place or
    /// fragment by fragment through the staging buffer.
    pub(super) fn send_to_peer(
        &mut self,
        device: u32,
        address: u64,
        size: u64,
        peer: i32,
    ) -> Result<(), (ErrorCode, String)> {
        let lost = |e: String| (ErrorCode::BackendFailure, e);
        if let Some(at) = self.memory.own_range(device, address, size) {
            // SAFETY: `own_range` found these bytes inside memory this process
            // allocated for the device; nothing writes it meanwhile.
            let data = unsafe { std::slice::from_raw_parts(at as *const u8, size as usize) };
            return transfer::send(&self.transport, peer, self.tag, data).map_err(lost);
        }
        let device = self.device(device)?.clone();
        let mut staging = std::mem::take(&mut self.staging);
        let outcome = (|| {
            for (offset, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
                staging.resize(staging.len().max(len as usize), 0);
                let piece = &mut staging[..len as usize];
                device
                    .copy_from_device(
                        piece.as_mut_ptr() as usize,
                        (address + offset) as usize,
                        piece.len(),
                    )
                    .map_err(|e| (e.code, e.details.clone()))?;
                self.transport.send(peer, self.tag, piece).map_err(lost)?;
            }
            Ok(())
        })();
        self.staging = staging;
        outcome
    }

    /// This server's half of a copy from another server: into its memory in place, or
    /// fragment by fragment through the staging buffer. A destination it cannot write
    /// is refused after the sender's data was taken and dropped (the sender must not
    /// wait for ever).
    pub(super) fn receive_from_peer(
        &mut self,
        device: u32,
        address: u64,
        size: u64,
        peer: i32,
    ) -> Result<(), (ErrorCode, String)> {
        let lost = |e: String| (ErrorCode::BackendFailure, e);
        let timeout = Some(self.timeout);
        if let Some(at) = self.memory.own_range(device, address, size) {
            // SAFETY: `own_range` found these bytes inside memory this process
            // allocated for the device; nothing else touches it meanwhile.
            let target = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, size as usize) };
            return transfer::receive(&self.transport, peer, self.tag, timeout, target)
                .map_err(lost);
        }
        let device = match self.device(device) {
            Ok(d) => d.clone(),
            Err(e) => {
                transfer::drain(&self.transport, peer, self.tag, timeout, size);
                return Err(e);
            }
        };
        let mut staging = std::mem::take(&mut self.staging);
        let outcome = (|| {
            for (offset, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
                staging.resize(staging.len().max(len as usize), 0);
                let piece = &mut staging[..len as usize];
                let got = self
                    .transport
                    .receive_into(peer, self.tag, timeout, piece)
                    .map_err(lost)?;
                transfer::expect_fragment(peer, got, len).map_err(lost)?;
                device
                    .copy_to_device(
                        (address + offset) as usize,
                        piece.as_ptr() as usize,
                        piece.len(),
                    )
                    .map_err(|e| (e.code, e.details.clone()))?;
            }
            Ok(())
        })();
        self.staging = staging;
        outcome
    }
}
