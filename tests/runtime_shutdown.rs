//! The last shutdown waits for the work of queues destroyed before it finished: after
//! `olShutDown` returns, nothing of the library touches the program's memory.

use offload::runtime::{self, InitOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn shutdown_waits_for_the_work_of_destroyed_queues() {
    runtime::init(&InitOptions::default()).unwrap();
    let rt = runtime::current().unwrap();
    let device = rt.host_device().clone();
    let handle = rt.create_queue(&device).unwrap();
    let queue = rt.queues.get(handle).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let finished = done.clone();
    rt.enqueue_host_function(&queue, move || {
        std::thread::sleep(Duration::from_millis(300));
        finished.store(true, Ordering::SeqCst);
    })
    .unwrap();
    drop(queue);
    // Destroying does not wait (as LLVM's olDestroyQueue) ...
    rt.destroy_queue(handle).unwrap();
    assert!(!done.load(Ordering::SeqCst));
    drop(rt);
    // ... the shutdown does.
    runtime::shut_down().unwrap();
    assert!(
        done.load(Ordering::SeqCst),
        "olShutDown returned while a destroyed queue's work still ran"
    );
}
