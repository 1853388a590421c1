//! A lock-free free list (a crossbeam channel used as an MPMC queue): signals and
//! kernel-argument buffers are reused across streams without a device-wide lock.

use crossbeam_channel::{Receiver, Sender};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Recycler<T> {
    tx: Sender<T>,
    rx: Receiver<T>,
    /// At most this many are kept; more are handed back to the caller to destroy.
    keep: usize,
    kept: AtomicUsize,
}

impl<T> Recycler<T> {
    pub fn new(keep: usize) -> Recycler<T> {
        let (tx, rx) = crossbeam_channel::unbounded();
        Recycler {
            tx,
            rx,
            keep,
            kept: AtomicUsize::new(0),
        }
    }

    /// A kept item, if any.
    pub fn take(&self) -> Option<T> {
        let item = self.rx.try_recv().ok()?;
        self.kept.fetch_sub(1, Ordering::Relaxed);
        Some(item)
    }

    /// Keeps `item` for reuse, or gives it back when enough are kept.
    pub fn put(&self, item: T) -> Option<T> {
        if self.kept.fetch_add(1, Ordering::Relaxed) >= self.keep {
            self.kept.fetch_sub(1, Ordering::Relaxed);
            return Some(item);
        }
        match self.tx.send(item) {
            Ok(()) => None,
            Err(e) => Some(e.into_inner()),
        }
    }

    /// Everything kept, to destroy (at shutdown).
    pub fn drain(&self) -> Vec<T> {
        let all: Vec<T> = self.rx.try_iter().collect();
        self.kept.fetch_sub(all.len(), Ordering::Relaxed);
        all
    }

    pub fn len(&self) -> usize {
        self.kept.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn items_are_reused_up_to_the_limit() {
        let r = Recycler::new(2);
        assert_eq!(r.take(), None);
        assert_eq!(r.put(1), None);
        assert_eq!(r.put(2), None);
        assert_eq!(r.put(3), Some(3), "a third is not kept");
        assert_eq!(r.len(), 2);
        assert_eq!(r.take(), Some(1));
        assert_eq!(r.drain(), vec![2]);
        assert!(r.is_empty());
    }

    #[test]
    fn threads_share_it_without_losing_items() {
        let r = Arc::new(Recycler::new(10_000));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        assert_eq!(r.put(t * 1000 + i), None);
                        if i % 2 == 0 {
                            r.take().expect("something is kept");
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(r.len(), 2000);
        assert_eq!(r.drain().len(), 2000);
    }
}
