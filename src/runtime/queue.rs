//! In-order queues of commands (being built: asynchronous execution lands with issue 3).

use crate::runtime::context::Runtime;
use crate::runtime::error::{Error, Result};
use crate::runtime::platform::Device;
use std::sync::Arc;

pub struct Queue {
    pub device: Arc<Device>,
}

impl Runtime {
    pub fn enqueue_copy(
        &self,
        _queue: &Queue,
        _dst: usize,
        _dst_device: &Arc<Device>,
        _src: usize,
        _src_device: &Arc<Device>,
        _size: usize,
    ) -> Result<()> {
        Err(Error::new(
            crate::runtime::ErrorCode::Unimplemented,
            "queues",
        ))
    }
    pub fn enqueue_fill(&self, _q: &Queue, _p: usize, _pat: Vec<u8>, _n: usize) -> Result<()> {
        Err(Error::new(
            crate::runtime::ErrorCode::Unimplemented,
            "queues",
        ))
    }
}
