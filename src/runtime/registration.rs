//! Bookkeeping of host memory registered with `olMemRegister`.
//!
//! A range may be registered again, whole or in part (each registration must be undone
//! once); a range that overlaps a registered one without lying inside it is refused, since
//! the two could not be unlocked independently.

use crate::plugin::foundation::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;

struct Registered {
    end: usize,
    /// The address the device uses for `start`.
    pinned: usize,
    /// Pointers handed out by `olMemRegister` for this range, one per registration.
    handed_out: Vec<usize>,
}

/// What `register` decided.
pub enum Registration {
    /// A new range: the backend must lock it and say what address the device uses.
    New,
    /// Inside a registered range: the device uses this address.
    Existing(usize),
}

#[derive(Default)]
pub struct Registrations {
    /// Per device: start → registration.
    by_device: Mutex<BTreeMap<(usize, usize), Registered>>,
}

impl Registrations {
    /// Registers `[start, start + size)` of `device`. `lock` is called for a new range and
    /// returns the device's address for `start`.
    pub fn register(
        &self,
        device: usize,
        start: usize,
        size: usize,
        lock: impl FnOnce() -> Result<usize>,
    ) -> Result<usize> {
        let end = start.checked_add(size).ok_or_else(|| {
            Error::invalid_size(format!(
                "Ptr {start:#x} + Size {size} overflows the address space"
            ))
        })?;
        let mut map = self.by_device.lock();
        match Self::decide(&mut map, device, start, end)? {
            Registration::Existing(pinned) => Ok(pinned),
            Registration::New => {
                let pinned = lock()?;
                map.insert(
                    (device, start),
                    Registered {
                        end,
                        pinned,
                        handed_out: vec![pinned],
                    },
                );
                Ok(pinned)
            }
        }
    }

    fn decide(
        map: &mut BTreeMap<(usize, usize), Registered>,
        device: usize,
        start: usize,
        end: usize,
    ) -> Result<Registration> {
        // The last range starting at or before `start` may contain it.
        if let Some((&(_, s), r)) = map.range_mut((device, 0)..=(device, start)).next_back() {
            if start < r.end {
                if end <= r.end {
                    let pinned = r.pinned + (start - s);
                    r.handed_out.push(pinned);
                    return Ok(Registration::Existing(pinned));
                }
                return Err(overlap(start, end, s, r.end));
            }
        }
        // A range starting inside the new one overlaps it without containing it.
        if let Some((&(_, s), r)) = map.range((device, start)..(device, end)).next() {
            return Err(overlap(start, end, s, r.end));
        }
        Ok(Registration::New)
    }

    /// Undoes one registration that returned `pinned`. Returns the range's start when this
    /// was its last registration, so the backend can unlock it.
    pub fn unregister(&self, device: usize, pinned: usize) -> Result<Option<usize>> {
        let mut map = self.by_device.lock();
        let found = map
            .range_mut((device, 0)..=(device, usize::MAX))
            .find(|(_, r)| r.handed_out.contains(&pinned));
        let Some((&key, r)) = found else {
            return Err(Error::invalid_argument(format!(
                "Ptr {pinned:#x} was not returned by olMemRegister on this device (or was already unregistered)"
            )));
        };
        let at = r.handed_out.iter().position(|&p| p == pinned).unwrap_or(0);
        r.handed_out.swap_remove(at);
        if r.handed_out.is_empty() {
            map.remove(&key);
            return Ok(Some(key.1));
        }
        Ok(None)
    }
}

fn overlap(start: usize, end: usize, s: usize, e: usize) -> Error {
    Error::invalid_argument(format!(
        "range [{start:#x}, {end:#x}) partly overlaps the registered range [{s:#x}, {e:#x}); \
         a registration must lie inside a registered range or not touch any"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(r: &Registrations, start: usize, size: usize) -> Result<usize> {
        r.register(0, start, size, || Ok(start))
    }

    #[test]
    fn nested_and_repeated_registrations_count() {
        let r = Registrations::default();
        assert_eq!(reg(&r, 0x1000, 0x100).unwrap(), 0x1000);
        assert_eq!(reg(&r, 0x1000, 0x100).unwrap(), 0x1000);
        assert_eq!(reg(&r, 0x1010, 0x10).unwrap(), 0x1010);
        assert_eq!(r.unregister(0, 0x1010).unwrap(), None);
        assert_eq!(r.unregister(0, 0x1000).unwrap(), None);
        assert_eq!(r.unregister(0, 0x1000).unwrap(), Some(0x1000));
        assert!(r.unregister(0, 0x1000).is_err());
    }

    #[test]
    fn partial_overlap_is_refused() {
        let r = Registrations::default();
        reg(&r, 0x1000, 0x100).unwrap();
        assert!(reg(&r, 0x10f0, 0x20).is_err());
        assert!(reg(&r, 0x0ff0, 0x20).is_err());
        assert!(reg(&r, 0x0f00, 0x400).is_err());
        assert!(reg(&r, 0x1100, 0x10).is_ok());
        // Another device's ranges are independent.
        assert!(r.register(1, 0x10f0, 0x20, || Ok(1)).is_ok());
    }
}
