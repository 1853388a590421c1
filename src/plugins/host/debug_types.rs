//! A host kernel's parameter types from the DWARF of its image (present when the
//! program was built with `-g`): the one place a host-target image records how a class
//! by value is laid out, whether a name is an enum, and how the C++ ABI passes a class
//! (DWARF 5's `DW_AT_calling_convention`, which clang emits by default). The debug
//! sections are copied when the image is loaded and read at the first launch that
//! needs them.

use super::c_call::{CType, Struct};
use gimli::{AttributeValue, DebuggingInformationEntry, Dwarf, EndianSlice, LittleEndian};
use gimli::{Unit, UnitOffset};
use goblin::elf::section_header::{SHF_COMPRESSED, SHT_NOBITS};
use goblin::elf::Elf;
use std::panic::{catch_unwind, AssertUnwindSafe};

type R<'a> = EndianSlice<'a, LittleEndian>;
type Entry<'a, 'u> = DebuggingInformationEntry<'a, 'u, R<'a>>;

/// Nesting deeper than this (types within types) is refused: real kernels' parameters
/// are far shallower, and malformed DWARF could loop.
const MAX_DEPTH: usize = 24;
/// Array elements a struct field may expand to.
const MAX_ELEMENTS: u64 = 4096;

/// The debug sections of an image.
pub struct DebugInfo {
    sections: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for DebugInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DebugInfo({} sections)", self.sections.len())
    }
}

impl DebugInfo {
    /// The `.debug_*` sections of the ELF image `image`; `None` when it has no
    /// (uncompressed) `.debug_info`.
    pub fn from_image(image: &[u8]) -> Option<DebugInfo> {
        let elf = catch_unwind(AssertUnwindSafe(|| Elf::parse(image)))
            .ok()?
            .ok()?;
        let mut sections = Vec::new();
        for sh in &elf.section_headers {
            let Some(name) = elf.shdr_strtab.get_at(sh.sh_name) else {
                continue;
            };
            if !name.starts_with(".debug_")
                || sh.sh_type == SHT_NOBITS
                || sh.sh_flags & u64::from(SHF_COMPRESSED) != 0
            {
                continue;
            }
            let start = usize::try_from(sh.sh_offset).ok()?;
            let end = start.checked_add(usize::try_from(sh.sh_size).ok()?)?;
            sections.push((name.to_string(), image.get(start..end)?.to_vec()));
        }
        sections
            .iter()
            .any(|(n, _)| n == ".debug_info")
            .then_some(DebugInfo { sections })
    }

    fn section(&self, name: &str) -> &[u8] {
        self.sections
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&[], |(_, bytes)| bytes.as_slice())
    }

    /// The parameter types of the function whose linkage name (or, without one, whose
    /// name) is `function`; `None` when the debug information has no such function.
    pub fn parameters(&self, function: &str) -> Result<Option<Vec<CType>>, String> {
        let dwarf = Dwarf::load(|id| -> gimli::Result<R<'_>> {
            Ok(EndianSlice::new(self.section(id.name()), LittleEndian))
        })
        .map_err(|e| e.to_string())?;
        let mut units = Vec::new();
        let mut headers = dwarf.units();
        while let Some(header) = headers.next().map_err(text)? {
            units.push(dwarf.unit(header).map_err(text)?);
        }
        let reader = Reader {
            dwarf: &dwarf,
            units: &units,
        };
        for (u, unit) in units.iter().enumerate() {
            let mut cursor = unit.entries();
            while let Some((_, entry)) = cursor.next_dfs().map_err(text)? {
                if entry.tag() != gimli::DW_TAG_subprogram
                    || entry
                        .attr_value(gimli::DW_AT_declaration)
                        .map_err(text)?
                        .is_some()
                    || reader.linkage_name(u, entry)?.as_deref() != Some(function)
                {
                    continue;
                }
                // An out-of-line instance lists its parameters through its abstract
                // origin, which always has them all.
                let (u, at) = match entry
                    .attr_value(gimli::DW_AT_abstract_origin)
                    .map_err(text)?
                {
                    Some(origin) => reader.target(u, origin)?,
                    None => (u, entry.offset()),
                };
                return reader.parameters(u, at).map(Some);
            }
        }
        Ok(None)
    }
}

fn text(e: gimli::Error) -> String {
    e.to_string()
}

struct Reader<'a> {
    dwarf: &'a Dwarf<R<'a>>,
    units: &'a [Unit<R<'a>>],
}

impl<'a> Reader<'a> {
    fn string(&self, u: usize, entry: &Entry<'a, '_>, at: gimli::DwAt) -> Option<String> {
        let value = entry.attr_value(at).ok()??;
        let s = self.dwarf.attr_string(&self.units[u], value).ok()?;
        Some(s.to_string_lossy().into_owned())
    }

    fn number(entry: &Entry<'a, '_>, at: gimli::DwAt) -> Result<Option<u64>, String> {
        Ok(entry
            .attr_value(at)
            .map_err(text)?
            .and_then(|v| v.udata_value()))
    }

    /// The unit and offset a reference attribute points to.
    fn target(
        &self,
        u: usize,
        value: AttributeValue<R<'a>>,
    ) -> Result<(usize, UnitOffset), String> {
        match value {
            AttributeValue::UnitRef(offset) => Ok((u, offset)),
            AttributeValue::DebugInfoRef(offset) => self
                .units
                .iter()
                .enumerate()
                .find_map(|(i, unit)| offset.to_unit_offset(&unit.header).map(|o| (i, o)))
                .ok_or_else(|| format!("a reference to {:#x} outside every unit", offset.0)),
            other => Err(format!("a type reference of form {other:?}")),
        }
    }

    /// The entry `at` points to, given to `body`.
    fn with_entry<T>(
        &self,
        (u, at): (usize, UnitOffset),
        body: impl FnOnce(&Entry<'a, '_>) -> Result<T, String>,
    ) -> Result<T, String> {
        let entry = self.units[u].entry(at).map_err(text)?;
        body(&entry)
    }

    /// A function's linkage name: its own, its declaration's or its abstract origin's,
    /// else (C linkage) its name.
    fn linkage_name(&self, u: usize, entry: &Entry<'a, '_>) -> Result<Option<String>, String> {
        for at in [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name] {
            if let Some(name) = self.string(u, entry, at) {
                return Ok(Some(name));
            }
        }
        for link in [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin] {
            if let Some(value) = entry.attr_value(link).map_err(text)? {
                let target = self.target(u, value)?;
                return self.with_entry(target, |e| self.linkage_name(target.0, e));
            }
        }
        Ok(self.string(u, entry, gimli::DW_AT_name))
    }

    /// The types of the formal parameters of the subprogram at `at`.
    fn parameters(&self, u: usize, at: UnitOffset) -> Result<Vec<CType>, String> {
        let unit = &self.units[u];
        let mut tree = unit.entries_tree(Some(at)).map_err(text)?;
        let root = tree.root().map_err(text)?;
        let mut children = root.children();
        let mut params = Vec::new();
        while let Some(child) = children.next().map_err(text)? {
            let entry = child.entry();
            match entry.tag() {
                gimli::DW_TAG_formal_parameter => {
                    let position = params.len() + 1;
                    let t = self
                        .type_of(u, entry, 0)
                        .map_err(|why| format!("parameter {position}: {why}"))?;
                    params.push(t);
                }
                gimli::DW_TAG_unspecified_parameters => {
                    return Err("it takes variadic parameters (...)".into())
                }
                _ => {}
            }
        }
        Ok(params)
    }

    /// The type of `entry` (its `DW_AT_type`, or its abstract origin's).
    fn type_of(&self, u: usize, entry: &Entry<'a, '_>, depth: usize) -> Result<CType, String> {
        if let Some(value) = entry.attr_value(gimli::DW_AT_type).map_err(text)? {
            return self.ctype(self.target(u, value)?, depth + 1);
        }
        if let Some(value) = entry
            .attr_value(gimli::DW_AT_abstract_origin)
            .map_err(text)?
        {
            let target = self.target(u, value)?;
            return self.with_entry(target, |e| self.type_of(target.0, e, depth + 1));
        }
        Err("no type is given".into())
    }

    fn ctype(&self, at: (usize, UnitOffset), depth: usize) -> Result<CType, String> {
        if depth > MAX_DEPTH {
            return Err("types nested too deeply".into());
        }
        let u = at.0;
        self.with_entry(at, |entry| match entry.tag() {
            gimli::DW_TAG_base_type => self.base_type(u, entry),
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => Ok(CType::Pointer),
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type => self.type_of(u, entry, depth),
            gimli::DW_TAG_enumeration_type => {
                let size = Self::number(entry, gimli::DW_AT_byte_size)?.unwrap_or(0);
                let signed = match self.type_of(u, entry, depth) {
                    Ok(CType::Int { signed, .. }) => signed,
                    _ => true,
                };
                match size {
                    1 | 2 | 4 | 8 => Ok(CType::Int {
                        size: size as usize,
                        signed,
                    }),
                    _ => Err(format!("an enum of {size} bytes")),
                }
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => self.class(u, entry, depth),
            gimli::DW_TAG_union_type => Err(format!(
                "'{}' is a union, which libffi cannot describe",
                self.type_name(u, entry)
            )),
            other => Err(format!("a type of tag {other}")),
        })
    }

    fn base_type(&self, u: usize, entry: &Entry<'a, '_>) -> Result<CType, String> {
        let size = Self::number(entry, gimli::DW_AT_byte_size)?.unwrap_or(0) as usize;
        let name = self.type_name(u, entry);
        let encoding = match entry.attr_value(gimli::DW_AT_encoding).map_err(text)? {
            Some(AttributeValue::Encoding(e)) => e,
            _ => return Err(format!("'{name}' has no encoding")),
        };
        let int = |signed| match size {
            1 | 2 | 4 | 8 => Ok(CType::Int { size, signed }),
            _ => Err(format!("'{name}' ({size} bytes)")),
        };
        match encoding {
            gimli::DW_ATE_signed | gimli::DW_ATE_signed_char => int(true),
            gimli::DW_ATE_unsigned
            | gimli::DW_ATE_unsigned_char
            | gimli::DW_ATE_boolean
            | gimli::DW_ATE_UTF => int(false),
            gimli::DW_ATE_float => match size {
                4 => Ok(CType::F32),
                8 => Ok(CType::F64),
                16 if name == "long double" => Ok(CType::LongDouble),
                _ => Err(format!("'{name}' ({size}-byte floating point)")),
            },
            _ => Err(format!("'{name}' (encoding {encoding})")),
        }
    }

    /// Whether unit `u` is C (not C++), by its language.
    fn is_c(&self, u: usize) -> Result<bool, String> {
        let mut cursor = self.units[u].entries();
        let Some((_, root)) = cursor.next_dfs().map_err(text)? else {
            return Ok(false);
        };
        Ok(matches!(
            root.attr_value(gimli::DW_AT_language).map_err(text)?,
            Some(AttributeValue::Language(
                gimli::DW_LANG_C
                    | gimli::DW_LANG_C89
                    | gimli::DW_LANG_C99
                    | gimli::DW_LANG_C11
                    | gimli::DW_LANG_C17
            ))
        ))
    }

    fn type_name(&self, u: usize, entry: &Entry<'a, '_>) -> String {
        self.string(u, entry, gimli::DW_AT_name)
            .unwrap_or_else(|| String::from("(anonymous)"))
    }

    /// A struct or class: by value with its fields, or by address, as its calling
    /// convention says.
    fn class(&self, u: usize, entry: &Entry<'a, '_>, depth: usize) -> Result<CType, String> {
        let name = self.type_name(u, entry);
        if entry
            .attr_value(gimli::DW_AT_declaration)
            .map_err(text)?
            .is_some()
        {
            return Err(format!(
                "the debug information declares '{name}' without its layout (clang gives a \
                 class's layout only where one of its constructors is compiled, unless \
                 built with -fstandalone-debug)"
            ));
        }
        let size = Self::number(entry, gimli::DW_AT_byte_size)?
            .ok_or_else(|| format!("'{name}' has no size"))? as usize;
        let by_address = match entry
            .attr_value(gimli::DW_AT_calling_convention)
            .map_err(text)?
        {
            Some(AttributeValue::CallingConvention(gimli::DW_CC_pass_by_reference)) => true,
            Some(AttributeValue::CallingConvention(gimli::DW_CC_pass_by_value)) => false,
            // C has no class a constructor or destructor makes pass by address.
            None if self.is_c(u)? => false,
            _ => {
                return Err(format!(
                    "the debug information does not say how '{name}' is passed (DWARF 5's \
                     calling convention, clang's default, does)"
                ))
            }
        };
        let fields = self.fields(u, entry.offset(), depth)?;
        if by_address {
            let align = match Self::number(entry, gimli::DW_AT_alignment)? {
                Some(a) => a as usize,
                None => fields.iter().map(|(_, f)| f.align()).max().unwrap_or(1),
            };
            return Ok(CType::ByAddress { name, size, align });
        }
        Ok(CType::Struct(Struct::new(&name, size, fields)?))
    }

    /// The data members and base classes of the class at `at`, at their offsets, arrays
    /// expanded to their elements.
    fn fields(
        &self,
        u: usize,
        at: UnitOffset,
        depth: usize,
    ) -> Result<Vec<(usize, CType)>, String> {
        let unit = &self.units[u];
        let mut tree = unit.entries_tree(Some(at)).map_err(text)?;
        let root = tree.root().map_err(text)?;
        let mut children = root.children();
        let mut fields = Vec::new();
        while let Some(child) = children.next().map_err(text)? {
            let entry = child.entry();
            let base = match entry.tag() {
                gimli::DW_TAG_member => false,
                gimli::DW_TAG_inheritance => true,
                _ => continue,
            };
            let member = self.string(u, entry, gimli::DW_AT_name).unwrap_or_default();
            if entry
                .attr_value(gimli::DW_AT_external)
                .map_err(text)?
                .is_some()
                || entry
                    .attr_value(gimli::DW_AT_declaration)
                    .map_err(text)?
                    .is_some()
            {
                continue; // a static data member
            }
            if entry
                .attr_value(gimli::DW_AT_bit_size)
                .map_err(text)?
                .is_some()
            {
                return Err(format!(
                    "bit-field '{member}', which libffi cannot describe"
                ));
            }
            if base
                && entry
                    .attr_value(gimli::DW_AT_virtuality)
                    .map_err(text)?
                    .is_some()
            {
                return Err("a virtual base class".into());
            }
            let offset = Self::number(entry, gimli::DW_AT_data_member_location)?
                .ok_or_else(|| format!("member '{member}' has no constant offset"))?
                as usize;
            let Some(value) = entry.attr_value(gimli::DW_AT_type).map_err(text)? else {
                return Err(format!("member '{member}' has no type"));
            };
            let target = self.target(u, value)?;
            if let Some((element, count)) = self.array(target, depth)? {
                let step = element.size();
                fields.extend((0..count).map(|i| (offset + i * step, element.clone())));
                continue;
            }
            match self.ctype(target, depth + 1) {
                // An empty base class takes no room.
                Err(why) if base && why.contains("no fields") => continue,
                t => fields.push((offset, t?)),
            }
        }
        Ok(fields)
    }

    /// If the type at `at` (through typedefs and qualifiers) is an array: its element
    /// type and how many elements it has in all.
    fn array(
        &self,
        at: (usize, UnitOffset),
        depth: usize,
    ) -> Result<Option<(CType, usize)>, String> {
        if depth > MAX_DEPTH {
            return Err("types nested too deeply".into());
        }
        let u = at.0;
        self.with_entry(at, |entry| match entry.tag() {
            gimli::DW_TAG_typedef | gimli::DW_TAG_const_type | gimli::DW_TAG_volatile_type => {
                match entry.attr_value(gimli::DW_AT_type).map_err(text)? {
                    Some(value) => self.array(self.target(u, value)?, depth + 1),
                    None => Ok(None),
                }
            }
            gimli::DW_TAG_array_type => {
                let Some(value) = entry.attr_value(gimli::DW_AT_type).map_err(text)? else {
                    return Err("an array without an element type".into());
                };
                let element = self.ctype(self.target(u, value)?, depth + 1)?;
                let mut total = 1u64;
                let mut tree = self.units[u]
                    .entries_tree(Some(entry.offset()))
                    .map_err(text)?;
                let root = tree.root().map_err(text)?;
                let mut children = root.children();
                while let Some(child) = children.next().map_err(text)? {
                    let e = child.entry();
                    if e.tag() != gimli::DW_TAG_subrange_type {
                        continue;
                    }
                    let count = match (
                        Self::number(e, gimli::DW_AT_count)?,
                        Self::number(e, gimli::DW_AT_upper_bound)?,
                    ) {
                        (Some(c), _) => c,
                        (None, Some(upper)) => upper + 1,
                        (None, None) => return Err("an array of unknown length".into()),
                    };
                    total = total.saturating_mul(count);
                }
                if total == 0 || total > MAX_ELEMENTS {
                    return Err(format!("an array of {total} elements"));
                }
                Ok(Some((element, total as usize)))
            }
            _ => Ok(None),
        })
    }
}
