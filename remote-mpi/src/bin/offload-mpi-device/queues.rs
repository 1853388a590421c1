//! The server's streams: one per queue of the application (and one per device for the
//! launches it waits for), and the answers to a queue's sync.

use super::output::Capture;
use super::{Outgoing, Served, Server};
use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::Stream;
use offload::plugins::remote::wire::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Server {
    /// The stream of the application's queue `queue`, made on first use.
    pub(super) fn queue(
        &mut self,
        queue: u64,
        device: u32,
    ) -> Result<Arc<dyn Stream>, (ErrorCode, String)> {
        if let Some(s) = self.queues.get(&queue) {
            return Ok(s.clone());
        }
        let stream = self
            .device(device)?
            .create_stream()
            .map_err(|e| (e.code, e.details.clone()))?;
        self.queues.insert(queue, stream.clone());
        Ok(stream)
    }

    /// Answers once everything queued for `queue` ended (forgetting the queue when
    /// `end`): the first failure of its launches (kept when one was refused) or of the
    /// stream. A queue still running is waited for by a thread of its own, so that the
    /// server goes on serving other queues meanwhile.
    pub(super) fn sync_queue(&mut self, queue: u64, end: bool) -> Served {
        let refused = self.queue_failures.remove(&queue);
        let stream = if end {
            self.queues.remove(&queue)
        } else {
            self.queues.get(&queue).cloned()
        };
        let settle = move |stream: Option<Arc<dyn Stream>>| -> Served {
            let ran = stream.map_or(Ok(()), |s| s.synchronize());
            match (refused, ran) {
                (Some(refused), _) => Err(refused),
                (None, Err(e)) => Err((e.code, e.details.clone())),
                (None, Ok(())) => Ok((Reply::Done, Outgoing::Nothing)),
            }
        };
        let Some(running) = stream.filter(|s| !matches!(s.is_idle(), Ok(true))) else {
            return settle(None);
        };
        let (transport, app, tag) = (self.transport.clone(), self.app, self.tag);
        let capture = self.capture.clone();
        let open_tags = self.open_tags.clone();
        // Still open when the main loop has answered `Later`: this thread closes it.
        open_tags.open(tag);
        let busy = self.busy.clone();
        busy.fetch_add(1, Ordering::AcqRel);
        let rank = transport.rank();
        let waiter = std::thread::Builder::new()
            .name("offload-mpi-sync".into())
            .spawn(move || {
                let reply = match settle(Some(running)) {
                    Ok((reply, _)) => reply,
                    Err((code, details)) => Reply::Error {
                        code: code as u32,
                        details: format!("rank {rank}: {details}"),
                    },
                };
                let reply = Capture::with_output(capture.as_deref(), reply, false);
                if let Err(e) = transport.send(app, tag, &reply.encode()) {
                    eprintln!("offload-mpi-device: {e}");
                }
                open_tags.close(tag);
                busy.fetch_sub(1, Ordering::AcqRel);
            })
            .map_err(|e| {
                self.open_tags.close(tag);
                (
                    ErrorCode::OutOfResources,
                    format!("a thread to wait for a queue: {e}"),
                )
            })?;
        self.waiters.push(waiter);
        Ok((Reply::Done, Outgoing::Later))
    }
}
