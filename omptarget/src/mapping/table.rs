//! The mapping table of one device: which host ranges have device copies, where, and
//! how many references keep each alive (OpenMP 5.2's dynamic reference count, plus
//! LLVM's `ompx_hold` count), and the attached pointers inside each copy. Pure
//! bookkeeping: no device calls happen here.

use std::collections::BTreeMap;

/// A reference count that never reaches zero (`declare target` globals).
pub const INFINITE: u64 = u64::MAX;

/// A pointer inside a mapped range whose device copy was made to point at device
/// memory (pointer attachment, `PTR_AND_OBJ`): copying the range again would overwrite
/// one side with the other side's value, so both values are remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowPointer {
    pub host_address: usize,
    pub host_value: usize,
    pub device_address: usize,
    pub device_value: usize,
}

/// One mapped host range `[host_begin, host_end)` and its device copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The base the range was mapped with (zero-length lookups also match down to it).
    pub host_base: usize,
    pub host_begin: usize,
    pub host_end: usize,
    /// Start of the device allocation to free when the mapping goes (0: memory this
    /// table does not own, such as a program's global). Struct mappings are padded so
    /// that the device copy keeps the host copy's alignment: `device_begin` may be after.
    pub device_alloc: usize,
    pub device_begin: usize,
    pub dynamic_refs: u64,
    pub hold_refs: u64,
    pub shadows: Vec<ShadowPointer>,
    /// What `LIBOMPTARGET_INFO` calls the mapping: clang's name string of the variable
    /// that created it (or a global's symbol name), 0 for none.
    pub name: usize,
}

impl Mapping {
    /// A new mapping made by a construct: one reference, dynamic or `ompx_hold`.
    pub fn new(
        host_base: usize,
        host_begin: usize,
        size: usize,
        device_alloc: usize,
        device_begin: usize,
        hold: bool,
    ) -> Self {
        Mapping {
            host_base,
            host_begin,
            host_end: host_begin + size,
            device_alloc,
            device_begin,
            dynamic_refs: u64::from(!hold),
            hold_refs: u64::from(hold),
            shadows: Vec::new(),
            name: 0,
        }
    }

    /// A mapping that lives as long as its program and is never freed by this table.
    pub fn permanent(host_begin: usize, size: usize, device_begin: usize, name: usize) -> Self {
        Mapping {
            dynamic_refs: INFINITE,
            device_alloc: 0,
            name,
            ..Mapping::new(host_begin, host_begin, size, 0, device_begin, false)
        }
    }

    /// The device address of host address `host` inside this mapping.
    pub fn device_address(&self, host: usize) -> usize {
        self.device_begin
            .wrapping_add(host.wrapping_sub(self.host_begin))
    }

    pub fn total_refs(&self) -> u64 {
        self.dynamic_refs.saturating_add(self.hold_refs)
    }

    fn count(&mut self, hold: bool) -> &mut u64 {
        if hold {
            &mut self.hold_refs
        } else {
            &mut self.dynamic_refs
        }
    }

    pub fn add_ref(&mut self, hold: bool) {
        let count = self.count(hold);
        if *count != INFINITE {
            *count += 1;
        }
    }

    pub fn drop_ref(&mut self, hold: bool) {
        let count = self.count(hold);
        if *count != INFINITE {
            *count = count.saturating_sub(1);
        }
    }

    /// `delete`: the count drops to one (an infinite one stays), so that the release
    /// that follows takes it to zero, as in LLVM (a struct member's release, which
    /// counts nothing, leaves it at one).
    pub fn reset_refs(&mut self, hold: bool) {
        let count = self.count(hold);
        if *count != INFINITE {
            *count = 1;
        }
    }

    /// Whether releasing one reference of the `hold` kind (all of them, for `delete`)
    /// leaves the mapping without references: the moment `from` data comes back.
    pub fn release_is_last(&self, hold: bool, delete: bool) -> bool {
        let (this, other) = if hold {
            (self.hold_refs, self.dynamic_refs)
        } else {
            (self.dynamic_refs, self.hold_refs)
        };
        if other > 0 || this == INFINITE {
            return false;
        }
        delete || this == 1
    }

    /// Records an attached pointer; false when the same one is recorded already (its
    /// device copy needs no new write).
    pub fn add_shadow(&mut self, shadow: ShadowPointer) -> bool {
        match self
            .shadows
            .iter_mut()
            .find(|s| s.host_address == shadow.host_address)
        {
            Some(old) if old.device_value == shadow.device_value => false,
            Some(old) => {
                *old = shadow;
                true
            }
            None => {
                self.shadows.push(shadow);
                true
            }
        }
    }
}

/// How a host range relates to the table.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Inside one mapping (keyed by its `host_begin`).
    Contained(usize),
    /// Overlapping a mapping without being inside it: an extension OpenMP forbids
    /// (except for implicit maps, which use the overlapped mapping).
    Extends(usize),
    /// No mapping touches it.
    Absent,
}

#[derive(Default, Debug)]
pub struct MappingTable {
    by_begin: BTreeMap<usize, Mapping>,
    /// `requires unified_shared_memory`: data not mapped explicitly is used at its host
    /// address (no copy), unless mapped with `close`.
    pub unified_memory: bool,
}

impl MappingTable {
    /// Where `[begin, begin + size)` stands, by LLVM's rules. A zero-length range (a
    /// pointer) is contained in the mapping that holds its address, or whose base it
    /// lies at or above (OpenMP 5.1's pointer initialization: `p` with `p[10:0]`).
    pub fn lookup(&self, begin: usize, size: usize) -> Lookup {
        if size == 0 {
            return self.lookup_pointer(begin);
        }
        let end = begin.saturating_add(size);
        if let Some((&key, m)) = self.by_begin.range(..=begin).next_back() {
            if begin < m.host_end {
                return if end <= m.host_end {
                    Lookup::Contained(key)
                } else {
                    Lookup::Extends(key)
                };
            }
        }
        // A mapping starting inside the range (after `begin`) also overlaps it.
        match self.by_begin.range(begin.saturating_add(1)..end).next() {
            Some((&key, _)) => Lookup::Extends(key),
            None => Lookup::Absent,
        }
    }

    fn lookup_pointer(&self, address: usize) -> Lookup {
        if let Some((&key, m)) = self.by_begin.range(..=address).next_back() {
            if address < m.host_end || address < m.host_base {
                return Lookup::Contained(key);
            }
        }
        if let Some((&key, m)) = self.by_begin.range(address.saturating_add(1)..).next() {
            if address >= m.host_base {
                return Lookup::Contained(key);
            }
        }
        Lookup::Absent
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

    /// Every mapping, by host address.
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
        t.insert(Mapping::new(100, 100, 100, 5000, 5000, false));
        t
    }

    #[test]
    fn contained_ranges_are_found() {
        let t = table();
        assert_eq!(t.lookup(100, 100), Lookup::Contained(100));
        assert_eq!(t.lookup(150, 10), Lookup::Contained(100));
        assert_eq!(t.lookup(199, 0), Lookup::Contained(100));
        assert_eq!(t.get(100).unwrap().device_address(120), 5020);
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

    #[test]
    fn zero_length_lookups_reach_down_to_the_base() {
        let mut t = MappingTable::default();
        // `p[10:20]` of an int array at 1000: base 1000, begin 1040.
        t.insert(Mapping::new(1000, 1040, 80, 9000, 9000, false));
        assert_eq!(t.lookup(1000, 0), Lookup::Contained(1040));
        assert_eq!(t.lookup(1020, 0), Lookup::Contained(1040));
        assert_eq!(t.lookup(1119, 0), Lookup::Contained(1040));
        assert_eq!(t.lookup(1120, 0), Lookup::Absent);
        assert_eq!(t.lookup(999, 0), Lookup::Absent);
        assert_eq!(t.get(1040).unwrap().device_address(1000), 8960);
    }

    #[test]
    fn release_is_last_follows_both_counts() {
        let mut m = Mapping::new(0, 0, 8, 1, 1, false);
        assert!(m.release_is_last(false, false));
        m.add_ref(false);
        assert!(!m.release_is_last(false, false));
        assert!(
            m.release_is_last(false, true),
            "delete drops every reference"
        );
        m.add_ref(true);
        assert!(!m.release_is_last(false, true), "a hold reference keeps it");
        m.reset_refs(false);
        assert_eq!((m.dynamic_refs, m.hold_refs), (1, 1));
        m.drop_ref(false);
        assert!(m.release_is_last(true, false));
        let g = Mapping::permanent(0, 8, 1, 0);
        assert!(
            !g.release_is_last(false, true),
            "globals are never released"
        );
    }

    #[test]
    fn a_shadow_pointer_is_written_once_per_value() {
        let mut m = Mapping::new(0, 0, 8, 1, 1, false);
        let s = ShadowPointer {
            host_address: 0,
            host_value: 7,
            device_address: 1,
            device_value: 70,
        };
        assert!(m.add_shadow(s));
        assert!(!m.add_shadow(s));
        assert!(m.add_shadow(ShadowPointer {
            device_value: 71,
            ..s
        }));
        assert_eq!(m.shadows.len(), 1);
    }
}
