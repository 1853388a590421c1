//! Runtime queues over the plugin's streams: a wait on an event of the same backend goes
//! to the stream; one on an event of another backend becomes a host step of the waiting
//! stream that blocks until the other event completes (checked with a stand-in backend
//! that records what it is asked, beside the real host backend).

use offload::plugin::foundation::error::Result;
use offload::plugin::{
    Backend, Device as PluginDevice, DeviceType, Guard, Plugin, Stream, StreamEvent, StreamOp,
};
use offload::plugins::host::HostPlugin;
use offload::runtime::event::Event;
use offload::runtime::platform::{Device, Platform};
use offload::runtime::profile::Profile;
use offload::runtime::queue::Queue;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A backend that runs nothing but records what its streams are given.
struct Recording;

#[derive(Default)]
struct RecordingStream {
    log: Mutex<Vec<String>>,
}

/// An event that completes when the test says so.
#[derive(Default)]
struct ManualEvent {
    done: AtomicBool,
}

impl StreamEvent for ManualEvent {
    fn is_complete(&self) -> Result<bool> {
        Ok(self.done.load(Ordering::SeqCst))
    }
    fn synchronize(&self) -> Result<()> {
        while !self.is_complete()? {
            std::thread::yield_now();
        }
        Ok(())
    }
    fn elapsed_ms(&self, _: &dyn StreamEvent) -> Result<f32> {
        Ok(0.0)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl Stream for RecordingStream {
    fn enqueue(&self, name: &'static str, op: StreamOp, _: Option<Guard>) -> Result<()> {
        let what = match op {
            StreamOp::Host(work) => {
                work()?; // the bridge: runs (and waits) here, as a host step would
                "host"
            }
            _ => "device",
        };
        self.log.lock().unwrap().push(format!("{name}: {what}"));
        Ok(())
    }
    fn record(&self) -> Result<Arc<dyn StreamEvent>> {
        Ok(Arc::new(ManualEvent::default()))
    }
    fn wait(&self, _: &Arc<dyn StreamEvent>) -> Result<()> {
        self.log.lock().unwrap().push("wait: native".into());
        Ok(())
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn is_idle(&self) -> Result<bool> {
        Ok(true)
    }
}

struct RecordingDevice;
impl PluginDevice for RecordingDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }
}

impl Plugin for Recording {
    fn backend(&self) -> Backend {
        Backend::Cuda
    }
    fn name(&self) -> String {
        "recording".into()
    }
    fn vendor(&self) -> String {
        "test".into()
    }
    fn version(&self) -> String {
        "0".into()
    }
    fn devices(&self) -> Vec<Arc<dyn PluginDevice>> {
        vec![Arc::new(RecordingDevice)]
    }
}

fn device(index: usize, plugin: &dyn Plugin) -> Arc<Device> {
    let platform = Arc::new(Platform::new(index, plugin, vec![index]));
    let imp = plugin.devices().remove(0);
    let kind = imp.device_type();
    Arc::new(Device::new(index, platform, imp, kind))
}

#[test]
fn waits_go_to_the_stream_or_across_backends_through_a_host_step() {
    let gpu = device(0, &Recording);
    let host = device(1, &HostPlugin);
    let stream = Arc::new(RecordingStream::default());
    let queue = Queue::new(gpu.clone(), stream.clone(), Arc::new(Profile::default()));

    // An event of the same backend: the stream waits natively.
    let same = Event {
        queue_handle: 1,
        device: gpu.clone(),
        inner: Arc::new(ManualEvent::default()),
    };
    queue.wait(&same).unwrap();
    assert_eq!(stream.log.lock().unwrap().last().unwrap(), "wait: native");

    // An event of the host backend, still pending: a host step that waits for it.
    let host_stream = host.imp.create_stream().unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    host_stream
        .enqueue(
            "olLaunchHostFunction",
            StreamOp::Host(Box::new(move || {
                while !open.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                Ok(())
            })),
            None,
        )
        .unwrap();
    let other = Event {
        queue_handle: 2,
        device: host.clone(),
        inner: host_stream.record().unwrap(),
    };
    assert!(!other.is_complete().unwrap());
    let opener = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        gate.store(true, Ordering::SeqCst);
    });
    queue.wait(&other).unwrap(); // the recording stream runs the bridge inline
    assert!(
        other.is_complete().unwrap(),
        "the bridge waited for the host event"
    );
    assert_eq!(
        stream.log.lock().unwrap().last().unwrap(),
        "olWaitEvents: host"
    );
    opener.join().unwrap();

    // A complete event costs nothing.
    let before = stream.log.lock().unwrap().len();
    queue.wait(&other).unwrap();
    assert_eq!(stream.log.lock().unwrap().len(), before);
}
