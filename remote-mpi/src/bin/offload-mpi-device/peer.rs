//! Copies between two servers: each serves its half (`send_memory` or
//! `receive_memory`, see `transfer`) with the other server directly; the application
//! only asks both. Here: which ranks may be the other side.

use super::Server;
use offload::plugin::foundation::error::ErrorCode;

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
}
