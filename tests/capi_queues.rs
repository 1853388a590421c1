//! Queues and events through the C API, driven from Rust (kernels have their own tests).

mod common;

use common::*;
use offload::capi::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn record(data: *mut c_void) {
    ORDER.lock().unwrap().push(data as usize);
}

unsafe extern "C" fn slow(data: *mut c_void) {
    std::thread::sleep(std::time::Duration::from_millis(30));
    // SAFETY: the test passes a pointer to an AtomicUsize that outlives the queue.
    unsafe { &*(data as *const AtomicUsize) }.store(1, Ordering::SeqCst);
}

unsafe extern "C" fn count(data: *mut c_void) {
    // SAFETY: as above.
    unsafe { &*(data as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

fn queue(device: ol_device_handle_t) -> ol_queue_handle_t {
    let mut q = null_mut();
    ok(olCreateQueue(device, &mut q));
    q
}

fn event(q: ol_queue_handle_t) -> ol_event_handle_t {
    let mut e = null_mut();
    ok(olCreateEvent(q, &mut e));
    e
}

fn is_complete(e: ol_event_handle_t) -> bool {
    let mut done = false;
    ok(olGetEventInfo(
        e,
        OL_EVENT_INFO_IS_COMPLETE,
        1,
        &mut done as *mut bool as *mut c_void,
    ));
    done
}

#[test]
fn queues_and_events_through_the_c_api() {
    ok(olInit());
    let device = host_device();

    // Host functions run in order.
    let q = queue(device);
    for i in 0..100 {
        ok(olLaunchHostFunction(q, Some(record), i as *mut c_void));
    }
    ok(olSyncQueue(q));
    assert_eq!(*ORDER.lock().unwrap(), (0..100).collect::<Vec<_>>());
    let mut empty = false;
    ok(olGetQueueInfo(
        q,
        OL_QUEUE_INFO_EMPTY,
        1,
        &mut empty as *mut bool as *mut c_void,
    ));
    assert!(empty);
    let mut owner: ol_device_handle_t = null_mut();
    ok(olGetQueueInfo(
        q,
        OL_QUEUE_INFO_DEVICE,
        8,
        &mut owner as *mut _ as *mut c_void,
    ));
    assert_eq!(owner, device);

    // A cross-queue wait: q2's callback runs only after q1's slow one.
    let flag = AtomicUsize::new(0);
    let seen = AtomicUsize::new(usize::MAX);
    let q2 = queue(device);
    ok(olLaunchHostFunction(
        q,
        Some(slow),
        &flag as *const _ as *mut c_void,
    ));
    let mut e = event(q);
    ok(olWaitEvents(q2, &mut e, 1));
    extern "C" fn copy_flag(data: *mut c_void) {
        // SAFETY: the test passes pointers to two AtomicUsize values that outlive the queue.
        let pair = unsafe { &*(data as *const (&AtomicUsize, &AtomicUsize)) };
        pair.1
            .store(pair.0.load(Ordering::SeqCst), Ordering::SeqCst);
    }
    let pair = (&flag, &seen);
    ok(olLaunchHostFunction(
        q2,
        Some(copy_flag),
        &pair as *const _ as *mut c_void,
    ));
    ok(olSyncQueue(q2));
    assert_eq!(seen.load(Ordering::SeqCst), 1, "the wait held q2 back");
    assert!(is_complete(e));
    let mut from: ol_queue_handle_t = null_mut();
    ok(olGetEventInfo(
        e,
        OL_EVENT_INFO_QUEUE,
        8,
        &mut from as *mut _ as *mut c_void,
    ));
    assert_eq!(from, q);

    // Elapsed time between two events around a slow callback.
    let start = event(q);
    ok(olLaunchHostFunction(
        q,
        Some(slow),
        &flag as *const _ as *mut c_void,
    ));
    let end = event(q);
    let mut ms = 0f32;
    ok(olGetEventElapsedTime(start, end, &mut ms));
    assert!(ms >= 25.0, "elapsed {ms} ms");
    ok(olSyncEvent(end));

    // An asynchronous error is kept and reported by the next sync, naming what failed.
    let mut buf: *mut c_void = null_mut();
    ok(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 256, &mut buf));
    let mut host = [0u8; 256];
    ok(olLaunchHostFunction(
        q,
        Some(slow),
        &flag as *const _ as *mut c_void,
    ));
    ok(olMemcpy(
        q,
        host.as_mut_ptr() as *mut c_void,
        device,
        buf,
        device,
        256,
    ));
    let counter = AtomicUsize::new(0);
    ok(olLaunchHostFunction(
        q,
        Some(count),
        &counter as *const _ as *mut c_void,
    ));
    let after = event(q);
    ok(olMemFree(buf));
    let d = fails(olSyncQueue(q), OL_ERRC_INVALID_ARGUMENT);
    assert!(d.contains("olMemcpy") && d.contains("freed"), "{d}");
    assert!(
        d.contains("1 commands enqueued after it were skipped"),
        "{d}"
    );
    assert_eq!(counter.load(Ordering::SeqCst), 0);
    fails(olSyncEvent(after), OL_ERRC_INVALID_ARGUMENT);
    ok(olSyncQueue(q));

    // Destroying a queue with work in flight: the work completes, the event stays valid.
    let q3 = queue(device);
    let done = AtomicUsize::new(0);
    ok(olLaunchHostFunction(
        q3,
        Some(slow),
        &done as *const _ as *mut c_void,
    ));
    let last = event(q3);
    ok(olDestroyQueue(q3));
    fails(olSyncQueue(q3), OL_ERRC_INVALID_QUEUE);
    ok(olSyncEvent(last));
    assert_eq!(done.load(Ordering::SeqCst), 1);
    ok(olDestroyEvent(last));
    fails(olSyncEvent(last), OL_ERRC_INVALID_EVENT);

    // 1000 queues share the pool.
    let total = AtomicUsize::new(0);
    let queues: Vec<_> = (0..1000).map(|_| queue(device)).collect();
    for &q in &queues {
        ok(olLaunchHostFunction(
            q,
            Some(count),
            &total as *const _ as *mut c_void,
        ));
    }
    for &q in &queues {
        ok(olSyncQueue(q));
        ok(olDestroyQueue(q));
    }
    assert_eq!(total.load(Ordering::SeqCst), 1000);

    // 16 threads, each with its own queue.
    let total = AtomicUsize::new(0);
    let device_addr = device as usize;
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                let q = queue(device_addr as ol_device_handle_t);
                for _ in 0..200 {
                    ok(olLaunchHostFunction(
                        q,
                        Some(count),
                        &total as *const _ as *mut c_void,
                    ));
                }
                ok(olSyncQueue(q));
                ok(olDestroyQueue(q));
            });
        }
    });
    assert_eq!(total.load(Ordering::SeqCst), 16 * 200);

    // Bad input.
    fails(
        olCreateQueue(null_mut(), &mut null_mut()),
        OL_ERRC_INVALID_NULL_HANDLE,
    );
    fails(
        olCreateQueue(device, null_mut()),
        OL_ERRC_INVALID_NULL_POINTER,
    );
    fails(
        olSyncQueue(0x1234 as ol_queue_handle_t),
        OL_ERRC_INVALID_QUEUE,
    );
    fails(
        olLaunchHostFunction(q, None, null_mut()),
        OL_ERRC_INVALID_NULL_POINTER,
    );
    fails(olWaitEvents(q, null_mut(), 2), OL_ERRC_INVALID_NULL_POINTER);
    let mut bogus = 0x99 as ol_event_handle_t;
    fails(olWaitEvents(q, &mut bogus, 1), OL_ERRC_INVALID_EVENT);
    fails(
        olGetQueueInfo(q, 7, 8, &mut owner as *mut _ as *mut c_void),
        OL_ERRC_INVALID_ENUMERATION,
    );
    fails(
        olGetEventElapsedTime(start, end, null_mut()),
        OL_ERRC_INVALID_NULL_POINTER,
    );

    // A zero-byte copy or fill on a queue touches nothing: freeing its memory before the
    // queue gets there is no error at the sync (found by the API fuzzer on a remote device,
    // where the copy was queued and failed as a use after free).
    let mut m: *mut c_void = null_mut();
    ok(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 64, &mut m));
    static SLOW_DONE: AtomicUsize = AtomicUsize::new(0);
    let done = &SLOW_DONE as *const AtomicUsize as *mut c_void;
    ok(olLaunchHostFunction(q, Some(slow), done));
    ok(olMemcpy(q, m, device, m, device, 0));
    let byte = 7u8;
    ok(olMemFill(q, m, 1, (&byte as *const u8).cast(), 0));
    ok(olMemFree(m));
    ok(olSyncQueue(q));

    ok(olDestroyQueue(q));
    ok(olDestroyQueue(q2));
    ok(olShutDown());
}
