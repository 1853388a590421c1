//! Queues as the runtime sees them: a device's stream (the backend's, see
//! `plugin::Stream`) and what every backend's queue has in common: its device, the
//! shutdown accounting, and waits on events of another backend, bridged here once.

use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::Result;
use crate::plugin::{CopyDirection, Guard, Stream, StreamOp};
use crate::runtime::event::Event;
use crate::runtime::platform::Device;
use crate::runtime::profile::{self, Category, Description, Profile};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Numbers queues for the profile's timeline (one row per queue).
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

c_enum! {
    /// `ol_queue_info_t`, in the header's order, then our extension.
    pub enum QueueInfo {
        Device = 0,
        Empty = 1,
        NativeHandle = crate::plugin::EXTENSION_BASE,
    }
}

pub struct Queue {
    pub device: Arc<Device>,
    pub stream: Arc<dyn Stream>,
    profile: Arc<Profile>,
    /// The queue's row in the profile.
    id: usize,
}

impl Queue {
    pub fn new(device: Arc<Device>, stream: Arc<dyn Stream>, profile: Arc<Profile>) -> Self {
        Queue {
            device,
            stream,
            profile,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Appends an operation (see `Stream::enqueue`), timed when profiling.
    pub fn enqueue(&self, name: &'static str, op: StreamOp, guard: Option<Guard>) -> Result<()> {
        if !profile::enabled() {
            return self.stream.enqueue(name, op, guard);
        }
        let description = describe(name, &op);
        self.profile.around(
            &self.device,
            self.id,
            &self.stream,
            || description,
            || self.stream.enqueue(name, op, guard),
        )
    }

    /// Later work waits for `event`: through the stream where the event is of the same
    /// backend, else as the stream waits on another backend's (`Stream::wait_foreign`).
    /// An event that cannot complete (its stream failed) is waited for all the same: the
    /// failure comes where the wait does.
    pub fn wait(&self, event: &Event) -> Result<()> {
        if matches!(event.inner.is_complete(), Ok(true)) {
            return Ok(());
        }
        let same_backend = event.device.platform.index == self.device.platform.index;
        let description = || Description {
            category: Category::Wait,
            name: "olWaitEvents".into(),
            args: vec![("on", event.device.describe())],
        };
        self.profile
            .around(&self.device, self.id, &self.stream, description, || {
                if same_backend {
                    self.stream.wait(&event.inner)
                } else {
                    self.stream.wait_foreign(event.inner.clone())
                }
            })
    }

    pub fn sync(&self) -> Result<()> {
        self.stream.synchronize()
    }

    pub fn is_empty(&self) -> Result<bool> {
        self.stream.is_idle()
    }
}

/// What the profile says of an operation.
fn describe(name: &'static str, op: &StreamOp) -> Description {
    match op {
        StreamOp::Copy {
            size, direction, ..
        } => Description {
            category: Category::Copy,
            name: format!("{name} {size} B"),
            args: vec![
                ("bytes", size.to_string()),
                ("direction", direction_name(*direction).into()),
            ],
        },
        StreamOp::Fill { pattern, size, .. } => Description {
            category: Category::Fill,
            name: format!("{name} {size} B"),
            args: vec![
                ("bytes", size.to_string()),
                ("pattern bytes", pattern.len().to_string()),
            ],
        },
        StreamOp::Launch {
            kernel,
            config,
            args,
        } => Description {
            category: Category::Kernel,
            name: kernel.name().to_string(),
            args: vec![
                ("groups", format!("{:?}", config.num_groups)),
                ("group size", format!("{:?}", config.group_size)),
                (
                    "dynamic shared memory",
                    config.dyn_shared_memory.to_string(),
                ),
                ("argument bytes", args.len().to_string()),
            ],
        },
        StreamOp::Host(_) => Description {
            category: match name {
                "olWaitEvents" => Category::Wait,
                _ => Category::HostFunction,
            },
            name: name.to_string(),
            args: Vec::new(),
        },
    }
}

fn direction_name(direction: CopyDirection) -> &'static str {
    match direction {
        CopyDirection::HostToDevice => "host to device",
        CopyDirection::DeviceToHost => "device to host",
        CopyDirection::DeviceToDevice => "device to device",
        CopyDirection::HostToHost => "host to host",
    }
}
