//! The Rust runtime API (what the C layer calls): asynchronous errors from Rust host
//! functions, and waits that cannot deadlock the worker pool.

use offload::plugin::foundation::worker_pool::WorkerPool;
use offload::runtime::{self, ErrorCode, InitOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn host_function_panics_and_waits_on_a_busy_pool() {
    runtime::init(&InitOptions::default()).unwrap();
    let rt = runtime::current().unwrap();
    let device = rt.host_device().clone();
    let q = rt.queues.get(rt.create_queue(&device).unwrap()).unwrap();

    // A panicking host function is an error of the next sync, naming what failed; the
    // queue works again afterwards.
    rt.enqueue_host_function(&q, || panic!("the callback broke"))
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    rt.enqueue_host_function(&q, move || {
        r.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let e = q.sync().unwrap_err();
    assert_eq!(e.code, ErrorCode::Unknown);
    assert!(e.details.contains("the callback broke"), "{e}");
    assert!(e.details.contains("olLaunchHostFunction"), "{e}");
    assert!(
        e.details
            .contains("1 commands enqueued after it were skipped"),
        "{e}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    q.sync().unwrap();

    // More queues waiting on one event than there are workers: waiting gives the worker
    // back, so the queue that completes the event still gets to run.
    let gate = rt.queues.get(rt.create_queue(&device).unwrap()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Mutex::new(rx);
    rt.enqueue_host_function(&gate, move || {
        let _ = rx.lock().unwrap().recv();
    })
    .unwrap();
    let event = rt.events.get(rt.create_event(&gate, 0).unwrap()).unwrap();
    let waiters: Vec<_> = (0..4 * WorkerPool::global().threads())
        .map(|_| rt.queues.get(rt.create_queue(&device).unwrap()).unwrap())
        .collect();
    let after = Arc::new(AtomicUsize::new(0));
    for w in &waiters {
        rt.wait_events(w, vec![event.clone()]).unwrap();
        let a = after.clone();
        rt.enqueue_host_function(w, move || {
            a.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(
        after.load(Ordering::SeqCst),
        0,
        "nothing passes the wait early"
    );
    tx.send(()).unwrap();
    for w in &waiters {
        w.sync().unwrap();
    }
    assert_eq!(after.load(Ordering::SeqCst), waiters.len());
    // Queues made and destroyed for ever leave no trace: finished streams are forgotten.
    let before = rt.retired.lock().len();
    for _ in 0..100 {
        let handle = rt.create_queue(&device).unwrap();
        rt.destroy_queue(handle).unwrap();
    }
    let after = rt.retired.lock().len();
    assert!(
        after <= before + 1,
        "{before} streams remembered, then {after}"
    );
    drop((q, gate, waiters, rt));
    runtime::shut_down().unwrap();
}
