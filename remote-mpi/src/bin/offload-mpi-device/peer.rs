//! Copies between two servers: each serves its half (send or receive) with the other
//! server directly; the application only asks both.

use super::Server;
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

    /// This server's half of a copy to another server: its memory's bytes.
    pub(super) fn send_to_peer(
        &mut self,
        device: u32,
        address: u64,
        size: u64,
        peer: i32,
    ) -> Result<(), (ErrorCode, String)> {
        self.send_memory(peer, device, address, size)
    }

    /// This server's half of a copy from another server: into its memory.
    pub(super) fn receive_from_peer(
        &mut self,
        device: u32,
        address: u64,
        size: u64,
        peer: i32,
    ) -> Result<(), (ErrorCode, String)> {
        let timeout = Some(self.timeout);
        self.receive_memory(peer, timeout, device, address, size)
    }
}
