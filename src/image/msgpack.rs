//! A bounded MessagePack document reader on top of `rmp`'s marker decoding.
//!
//! `rmp` decodes markers and fixed-width numbers; this module builds a small value tree
//! with limits that untrusted input cannot exceed: nesting depth, and element counts that
//! must each be backed by at least one remaining input byte. Strings and byte strings
//! borrow from the input: an AMDGPU code object's metadata is hundreds of them, read at
//! every program load.

use std::collections::HashSet;

use rmp::decode::{read_marker, Bytes, RmpRead};
use rmp::Marker;

/// Deep enough for any real metadata (AMDGPU's is 4 levels), shallow enough for the stack.
const MAX_DEPTH: u32 = 32;

#[derive(Clone, Debug, PartialEq)]
pub enum MsgValue<'a> {
    Nil,
    Bool(bool),
    /// Every integer, signed or not, widened.
    Int(i128),
    Float(f64),
    Str(&'a str),
    Bin(&'a [u8]),
    Array(Vec<MsgValue<'a>>),
    /// Keys in document order; duplicates are rejected while reading.
    Map(Vec<(MsgValue<'a>, MsgValue<'a>)>),
    Ext(i8, &'a [u8]),
}

impl<'a> MsgValue<'a> {
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            MsgValue::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            MsgValue::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[MsgValue<'a>]> {
        match self {
            MsgValue::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_map(&self) -> Option<&[(MsgValue<'a>, MsgValue<'a>)]> {
        match self {
            MsgValue::Map(m) => Some(m),
            _ => None,
        }
    }
    /// The value under string key `key` of a map.
    pub fn get(&self, key: &str) -> Option<&MsgValue<'a>> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
}

/// Decodes one complete document; trailing bytes other than NUL padding are an error.
pub fn decode_document(data: &[u8]) -> Result<MsgValue<'_>, String> {
    let mut rd = Bytes::new(data);
    let value = read_value(&mut rd, 0)?;
    if rd.remaining_slice().iter().any(|&b| b != 0) {
        return Err(format!(
            "{} unexpected bytes after the MessagePack document",
            rd.remaining_slice().len()
        ));
    }
    Ok(value)
}

fn eof<E: std::fmt::Debug>(e: E) -> String {
    format!("truncated MessagePack data ({e:?})")
}

fn take<'a>(rd: &mut Bytes<'a>, len: u32) -> Result<&'a [u8], String> {
    let rest = rd.remaining_slice();
    let len = len as usize;
    if len > rest.len() {
        return Err(format!(
            "MessagePack item of {len} bytes overruns the {} bytes left",
            rest.len()
        ));
    }
    *rd = Bytes::new(&rest[len..]);
    Ok(&rest[..len])
}

/// A container of `count` elements needs at least `count` more bytes (one marker each),
/// so a lying count is caught before anything is allocated for it.
fn check_count(rd: &Bytes<'_>, count: u32, per_element: usize) -> Result<usize, String> {
    let count = count as usize;
    if count.saturating_mul(per_element) > rd.remaining_slice().len() {
        return Err(format!(
            "MessagePack container claims {count} elements, more than the data holds"
        ));
    }
    Ok(count)
}

fn read_value<'a>(rd: &mut Bytes<'a>, depth: u32) -> Result<MsgValue<'a>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("MessagePack nesting deeper than {MAX_DEPTH}"));
    }
    let marker = read_marker(rd).map_err(|e| eof(e.0))?;
    let v = match marker {
        Marker::Null => MsgValue::Nil,
        Marker::True => MsgValue::Bool(true),
        Marker::False => MsgValue::Bool(false),
        Marker::FixPos(v) => MsgValue::Int(v.into()),
        Marker::FixNeg(v) => MsgValue::Int(v.into()),
        Marker::U8 => MsgValue::Int(rd.read_data_u8().map_err(eof)?.into()),
        Marker::U16 => MsgValue::Int(rd.read_data_u16().map_err(eof)?.into()),
        Marker::U32 => MsgValue::Int(rd.read_data_u32().map_err(eof)?.into()),
        Marker::U64 => MsgValue::Int(rd.read_data_u64().map_err(eof)?.into()),
        Marker::I8 => MsgValue::Int(rd.read_data_i8().map_err(eof)?.into()),
        Marker::I16 => MsgValue::Int(rd.read_data_i16().map_err(eof)?.into()),
        Marker::I32 => MsgValue::Int(rd.read_data_i32().map_err(eof)?.into()),
        Marker::I64 => MsgValue::Int(rd.read_data_i64().map_err(eof)?.into()),
        Marker::F32 => MsgValue::Float(rd.read_data_f32().map_err(eof)?.into()),
        Marker::F64 => MsgValue::Float(rd.read_data_f64().map_err(eof)?),
        Marker::FixStr(n) => string(rd, n.into())?,
        Marker::Str8 => {
            let n = rd.read_data_u8().map_err(eof)?;
            string(rd, n.into())?
        }
        Marker::Str16 => {
            let n = rd.read_data_u16().map_err(eof)?;
            string(rd, n.into())?
        }
        Marker::Str32 => {
            let n = rd.read_data_u32().map_err(eof)?;
            string(rd, n)?
        }
        Marker::Bin8 => {
            let n = rd.read_data_u8().map_err(eof)?;
            MsgValue::Bin(take(rd, n.into())?)
        }
        Marker::Bin16 => {
            let n = rd.read_data_u16().map_err(eof)?;
            MsgValue::Bin(take(rd, n.into())?)
        }
        Marker::Bin32 => {
            let n = rd.read_data_u32().map_err(eof)?;
            MsgValue::Bin(take(rd, n)?)
        }
        Marker::FixArray(n) => array(rd, n.into(), depth)?,
        Marker::Array16 => {
            let n = rd.read_data_u16().map_err(eof)?;
            array(rd, n.into(), depth)?
        }
        Marker::Array32 => {
            let n = rd.read_data_u32().map_err(eof)?;
            array(rd, n, depth)?
        }
        Marker::FixMap(n) => map(rd, n.into(), depth)?,
        Marker::Map16 => {
            let n = rd.read_data_u16().map_err(eof)?;
            map(rd, n.into(), depth)?
        }
        Marker::Map32 => {
            let n = rd.read_data_u32().map_err(eof)?;
            map(rd, n, depth)?
        }
        Marker::FixExt1 => ext(rd, 1)?,
        Marker::FixExt2 => ext(rd, 2)?,
        Marker::FixExt4 => ext(rd, 4)?,
        Marker::FixExt8 => ext(rd, 8)?,
        Marker::FixExt16 => ext(rd, 16)?,
        Marker::Ext8 => {
            let n = rd.read_data_u8().map_err(eof)?;
            ext(rd, n.into())?
        }
        Marker::Ext16 => {
            let n = rd.read_data_u16().map_err(eof)?;
            ext(rd, n.into())?
        }
        Marker::Ext32 => {
            let n = rd.read_data_u32().map_err(eof)?;
            ext(rd, n)?
        }
        Marker::Reserved => return Err("reserved MessagePack marker 0xc1".to_owned()),
    };
    Ok(v)
}

fn string<'a>(rd: &mut Bytes<'a>, len: u32) -> Result<MsgValue<'a>, String> {
    let raw = take(rd, len)?;
    std::str::from_utf8(raw)
        .map(MsgValue::Str)
        .map_err(|_| "MessagePack string is not UTF-8".to_owned())
}

fn ext<'a>(rd: &mut Bytes<'a>, len: u32) -> Result<MsgValue<'a>, String> {
    let tag = rd.read_data_i8().map_err(eof)?;
    Ok(MsgValue::Ext(tag, take(rd, len)?))
}

fn array<'a>(rd: &mut Bytes<'a>, count: u32, depth: u32) -> Result<MsgValue<'a>, String> {
    let count = check_count(rd, count, 1)?;
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        items.push(read_value(rd, depth + 1)?);
    }
    Ok(MsgValue::Array(items))
}

/// Maps of up to this many keys look for a duplicate key by comparing it with each
/// earlier one (a kernel's metadata map has about twenty: at most 2,016 comparisons of
/// short byte strings); larger ones hash, in constant time per key.
const COMPARED_KEYS: usize = 64;

fn map<'a>(rd: &mut Bytes<'a>, count: u32, depth: u32) -> Result<MsgValue<'a>, String> {
    let count = check_count(rd, count, 2)?;
    let mut entries: Vec<(MsgValue<'a>, MsgValue<'a>)> = Vec::with_capacity(count);
    // Duplicates are found by their encoded bytes.
    let mut hashed = (count > COMPARED_KEYS).then(|| HashSet::with_capacity(count));
    // Used only where nothing is hashed (an empty Vec allocates nothing).
    let mut keys: Vec<&[u8]> = Vec::with_capacity(if hashed.is_some() { 0 } else { count });
    for _ in 0..count {
        let before = rd.remaining_slice();
        let key = read_value(rd, depth + 1)?;
        let encoded = &before[..before.len() - rd.remaining_slice().len()];
        let duplicate = match &mut hashed {
            Some(seen) => !seen.insert(encoded),
            None => {
                let seen = keys.contains(&encoded);
                keys.push(encoded);
                seen
            }
        };
        if duplicate {
            return Err(format!("duplicate MessagePack map key {key:?}"));
        }
        let value = read_value(rd, depth + 1)?;
        entries.push((key, value));
    }
    Ok(MsgValue::Map(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Vec<u8> {
        let mut b = Vec::new();
        rmp::encode::write_map_len(&mut b, 2).unwrap();
        rmp::encode::write_str(&mut b, "a").unwrap();
        rmp::encode::write_uint(&mut b, 300).unwrap();
        rmp::encode::write_str(&mut b, "list").unwrap();
        rmp::encode::write_array_len(&mut b, 2).unwrap();
        rmp::encode::write_sint(&mut b, -5).unwrap();
        rmp::encode::write_str(&mut b, "x").unwrap();
        b
    }

    #[test]
    fn decodes_nested_values() {
        let bytes = doc();
        let v = decode_document(&bytes).unwrap();
        assert_eq!(v.get("a").and_then(MsgValue::as_u64), Some(300));
        assert_eq!(
            v.get("list")
                .and_then(MsgValue::as_array)
                .and_then(|l| l[1].as_str()),
            Some("x")
        );
        assert_eq!(
            v.get("list").and_then(MsgValue::as_array).map(<[_]>::len),
            Some(2)
        );
    }

    #[test]
    fn rejects_lies_and_duplicates() {
        let d = doc();
        for cut in 0..d.len() {
            assert!(decode_document(&d[..cut]).is_err(), "cut at {cut}");
        }
        // An array claiming 2^32-1 elements.
        assert!(decode_document(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
        // {"a": 1, "a": 2}
        assert!(decode_document(&[0x82, 0xa1, b'a', 1, 0xa1, b'a', 2]).is_err());
        // Past COMPARED_KEYS the keys are hashed: a duplicate there is found as well.
        let mut big = Vec::new();
        rmp::encode::write_map_len(&mut big, 80).unwrap();
        for key in (0..79u64).chain([7]) {
            rmp::encode::write_uint(&mut big, key).unwrap();
            rmp::encode::write_nil(&mut big).unwrap();
        }
        assert!(decode_document(&big).unwrap_err().contains("duplicate"));
        // Deep nesting.
        assert!(decode_document(&[0x91; 100]).is_err());
    }

    #[test]
    fn large_maps_decode_in_linear_time() {
        let mut b = Vec::new();
        rmp::encode::write_map_len(&mut b, 60_000).unwrap();
        for i in 0..60_000u32 {
            rmp::encode::write_uint(&mut b, u64::from(i)).unwrap();
            rmp::encode::write_nil(&mut b).unwrap();
        }
        let t = std::time::Instant::now();
        assert_eq!(
            decode_document(&b).unwrap().as_map().map(<[_]>::len),
            Some(60_000)
        );
        assert!(t.elapsed().as_secs() < 5);
    }
}
