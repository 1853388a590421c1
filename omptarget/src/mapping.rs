//! The mapping table of one device: which host ranges have device copies, where, and
//! how many references keep each alive (OpenMP 5.2's dynamic reference count, plus
//! LLVM's `ompx_hold` count). Pure bookkeeping: no device calls happen here.

use std::collections::BTreeMap;

/// One mapped host range `[host_begin, host_end)` and its device copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub host_begin: usize,
    pub host_end: usize,
    pub device_begin: usize,
    pub dynamic_refs: u64,
    pub hold_refs: u64,
}

impl Mapping {
    /// The device address of host address `host` inside this mapping.
    pub fn device_address(&self, host: usize) -> usize {
        self.device_begin + (host - self.host_begin)
    }

    pub fn is_released(&self) -> bool {
        self.dynamic_refs == 0 && self.hold_refs == 0
    }
}

/// How a host range relates to the table.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Inside one mapping (keyed by its `host_begin`).
    Contained(usize),
    /// Overlapping a mapping without being inside it: an extension OpenMP forbids.
    Extends(usize),
    /// No mapping touches it.
    Absent,
}

#[derive(Default, Debug)]
pub struct MappingTable {
    by_begin: BTreeMap<usize, Mapping>,
}

impl MappingTable {
    /// Where `[begin, begin + size)` stands. A zero-size range is contained in the
    /// mapping that holds its address (as LLVM looks up zero-length sections).
    pub fn lookup(&self, begin: usize, size: usize) -> Lookup {
        let end = begin.saturating_add(size);
        if let Some((&key, m)) = self.by_begin.range(..=begin).next_back() {
            if begin < m.host_end || (size == 0 && begin == m.host_begin) {
                return if end <= m.host_end {
                    Lookup::Contained(key)
                } else {
                    Lookup::Extends(key)
                };
            }
        }
        // A mapping starting inside the range (after `begin`) also overlaps it.
        let after_begin = begin.saturating_add(1);
        if end <= after_begin {
            return Lookup::Absent;
        }
        match self.by_begin.range(after_begin..end).next() {
            Some((&key, _)) => Lookup::Extends(key),
            None => Lookup::Absent,
        }
    }

    pub fn get(&self, key: usize) -> Option<&Mapping> {
        self.by_begin.get(&key)
    }

    pub fn get_mut(&mut self, key: usize) -> Option<&mut Mapping> {
        self.by_begin.get_mut(&key)
    }

    pub fn insert(&mut self, mapping: Mapping) {
        self.by_begin.insert(mapping.host_begin, mapping);
    }

    pub fn remove(&mut self, key: usize) -> Option<Mapping> {
        self.by_begin.remove(&key)
    }

    /// The mapping containing `[begin, begin + size)`, if any.
    pub fn find(&self, begin: usize, size: usize) -> Option<&Mapping> {
        match self.lookup(begin, size) {
            Lookup::Contained(key) => self.by_begin.get(&key),
            _ => None,
        }
    }

    /// Every mapping, in host-address order (for dumping the table).
    pub fn iter(&self) -> impl Iterator<Item = &Mapping> {
        self.by_begin.values()
    }

    /// Every mapping, for freeing the device memory at unregistration.
    pub fn drain(&mut self) -> Vec<Mapping> {
        std::mem::take(&mut self.by_begin).into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> MappingTable {
        let mut t = MappingTable::default();
        t.insert(Mapping {
            host_begin: 100,
            host_end: 200,
            device_begin: 5000,
            dynamic_refs: 1,
            hold_refs: 0,
        });
        t
    }

    #[test]
    fn contained_ranges_are_found() {
        let t = table();
        assert_eq!(t.lookup(100, 100), Lookup::Contained(100));
        assert_eq!(t.lookup(150, 10), Lookup::Contained(100));
        assert_eq!(t.lookup(199, 0), Lookup::Contained(100));
        assert_eq!(t.find(120, 4).unwrap().device_address(120), 5020);
    }

    #[test]
    fn extensions_are_detected_on_both_sides() {
        let t = table();
        assert_eq!(t.lookup(150, 100), Lookup::Extends(100));
        assert_eq!(t.lookup(50, 60), Lookup::Extends(100));
        assert_eq!(t.lookup(50, 200), Lookup::Extends(100));
    }

    #[test]
    fn disjoint_ranges_are_absent() {
        let t = table();
        assert_eq!(t.lookup(200, 10), Lookup::Absent);
        assert_eq!(t.lookup(0, 100), Lookup::Absent);
        assert_eq!(t.lookup(200, 0), Lookup::Absent);
        assert_eq!(t.lookup(50, 0), Lookup::Absent);
        assert_eq!(t.lookup(99, 1), Lookup::Absent);
    }
}
