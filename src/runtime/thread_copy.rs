//! Per-thread copies of shared state, checked against one shared counter: the hot calls
//! read their thread's copy and the counter and write no shared cache line (a lock word
//! or a reference count bounced between cores costs more than the call). The live
//! runtime (`state.rs`) and the recently used objects of the handle tables
//! (`handle_table.rs`) are kept this way.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::LocalKey;

/// A thread's copy: the counter's value when it was taken, and the copy.
pub type ThreadCopy<T> = RefCell<(u64, T)>;

/// Runs `use_copy` with this thread's copy in `local` (and `payload`), after `refresh`
/// brought it up to date if `counter` moved since it was taken. Where the copy cannot be
/// had, `shared` runs instead (with `payload`) and reads the shared state itself: a
/// nested call on this thread (a host callback run by a sync) while an outer call holds
/// the copy, or a call from an exit handler after thread-local storage is gone.
#[inline(always)]
pub fn with_thread_copy<T: 'static, P, R>(
    local: &'static LocalKey<ThreadCopy<T>>,
    counter: &AtomicU64,
    payload: P,
    refresh: impl FnOnce(&mut T),
    use_copy: impl FnOnce(&mut T, P) -> R,
    shared: impl FnOnce(P) -> R,
) -> R {
    let now = counter.load(Ordering::Acquire);
    let mut payload = Some(payload);
    let done = local.try_with(|copy| {
        let mut copy = copy.try_borrow_mut().ok()?;
        let (taken_at, value) = &mut *copy;
        if *taken_at != now {
            refresh(value);
            *taken_at = now;
        }
        Some(use_copy(value, payload.take()?))
    });
    match done {
        Ok(Some(result)) => result,
        // In use by an outer call, or gone: the payload was not used.
        _ => shared(payload.take().expect("not used by the copy")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static COUNTER: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static COPY: ThreadCopy<u32> = const { RefCell::new((0, 0)) };
    }

    #[test]
    fn a_copy_is_refreshed_when_the_counter_moves_and_shared_when_in_use() {
        let read =
            |value: u32| with_thread_copy(&COPY, &COUNTER, (), |v| *v = value, |v, ()| *v, |()| 99);
        assert_eq!(read(5), 5, "taken at 0, the counter at 1: refreshed");
        assert_eq!(read(6), 5, "up to date: kept");
        COUNTER.fetch_add(1, Ordering::Release);
        assert_eq!(read(7), 7);
        // A nested call while the copy is held reads the shared state.
        let nested = with_thread_copy(&COPY, &COUNTER, (), |_| {}, |_, ()| read(8), |()| 0);
        assert_eq!(nested, 99);
    }
}
