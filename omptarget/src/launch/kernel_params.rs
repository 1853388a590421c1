//! The parameters of a CUDA/HIP kernel compiled for the host device, read from its
//! mangled name (Itanium C++ ABI), so that `llvmLaunchKernel` can pass each argument as
//! the host convention does (one pointer-sized integer each) or refuse what that
//! convention cannot carry: a floating-point argument arrives in a vector register the
//! convention never fills, and a class passed by value in pieces it cannot know.

/// One parameter's place in the packed arguments clang builds (natural alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub offset: usize,
    pub size: usize,
}

/// What the name says of the parameters.
#[derive(Debug, PartialEq, Eq)]
pub enum Params {
    /// Pointers and integers only: their places in the packed arguments.
    Integers(Vec<Param>),
    /// A parameter the host convention cannot pass (named in the text).
    Unsupported(String),
    /// Not a mangled name this reader follows (`extern "C"`, templates): unknown.
    Unknown,
}

/// Reads the parameter list of the mangled function name `name`.
pub fn parse(name: &str) -> Params {
    let Some(rest) = name.strip_prefix("_Z") else {
        return Params::Unknown;
    };
    let mut s = rest.as_bytes();
    // The function's name: a source name, or a nested name of source names.
    if s.first() == Some(&b'N') {
        s = &s[1..];
        while s.first() != Some(&b'E') {
            match source_name(s) {
                Some(after) => s = after,
                None => return Params::Unknown,
            }
        }
        s = &s[1..];
    } else {
        match source_name(s) {
            Some(after) => s = after,
            None => return Params::Unknown,
        }
    }
    if s == b"v" {
        return Params::Integers(Vec::new());
    }
    let mut params = Vec::new();
    let mut end = 0usize;
    while !s.is_empty() {
        let (size, after) = match param(s) {
            Ok(found) => found,
            Err(Some(what)) => return Params::Unsupported(what),
            Err(None) => return Params::Unknown,
        };
        let offset = end.next_multiple_of(size);
        params.push(Param { offset, size });
        end = offset + size;
        s = after;
    }
    Params::Integers(params)
}

/// `<length><identifier>`: what follows it.
fn source_name(s: &[u8]) -> Option<&[u8]> {
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let length: usize = std::str::from_utf8(&s[..digits]).ok()?.parse().ok()?;
    s.get(digits + length..).filter(|_| length > 0)
}

/// One parameter type: its size and what follows; `Err(Some(why))` for a type the host
/// convention cannot pass, `Err(None)` for one this reader does not follow.
fn param(s: &[u8]) -> Result<(usize, &[u8]), Option<String>> {
    let (&code, after) = s.split_first().ok_or(None)?;
    match code {
        b'P' | b'R' | b'O' => Ok((8, pointee(after)?)),
        b'b' | b'c' | b'a' | b'h' => Ok((1, after)),
        b's' | b't' => Ok((2, after)),
        b'i' | b'j' | b'w' => Ok((4, after)),
        b'l' | b'm' | b'x' | b'y' => Ok((8, after)),
        b'f' | b'd' | b'e' | b'g' => Err(Some(format!(
            "a {} parameter",
            match code {
                b'f' => "float",
                b'd' => "double",
                _ => "long double",
            }
        ))),
        b'D' => Err(Some(
            "a half, vector or other extended-type parameter".into(),
        )),
        b'0'..=b'9' | b'N' => Err(Some("a parameter of class type, by value".into())),
        // A substitution stands for an earlier type (a pointer or a class): not followed.
        _ => Err(None),
    }
}

/// The type a pointer points to (any: only the pointer is passed).
fn pointee(s: &[u8]) -> Result<&[u8], Option<String>> {
    let mut s = s;
    while let Some((b'K' | b'V' | b'r', after)) = s.split_first() {
        s = after;
    }
    let (&code, after) = s.split_first().ok_or(None)?;
    match code {
        b'P' | b'R' | b'O' => pointee(after),
        b'0'..=b'9' => source_name(s).ok_or(None),
        b'S' => {
            // A substitution: S_, S0_, S1_, ... or St/Sa/Sb/Ss/Si/So/Sd.
            let end = after.iter().position(|&c| c == b'_');
            match after.first() {
                Some(b't' | b'a' | b'b' | b's' | b'i' | b'o' | b'd') => Ok(&after[1..]),
                _ => end.map(|e| &after[e + 1..]).ok_or(None),
            }
        }
        b'D' => after.get(1..).ok_or(None),
        b'v' | b'b' | b'c' | b'a' | b'h' | b's' | b't' | b'i' | b'j' | b'w' | b'l' | b'm'
        | b'x' | b'y' | b'f' | b'd' | b'e' | b'g' => Ok(after),
        _ => Err(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: usize, size: usize) -> Param {
        Param { offset, size }
    }

    #[test]
    fn pointers_and_integers_with_their_places() {
        assert_eq!(
            parse("_Z3addPlPKll"),
            Params::Integers(vec![at(0, 8), at(8, 8), at(16, 8)])
        );
        assert_eq!(
            parse("_Z4fillPii"),
            Params::Integers(vec![at(0, 8), at(8, 4)])
        );
        assert_eq!(
            parse("_Z5pairsiiPKc"),
            Params::Integers(vec![at(0, 4), at(4, 4), at(8, 8)])
        );
        assert_eq!(parse("_Z4noopv"), Params::Integers(vec![]));
        assert_eq!(
            parse("_ZN2ns6kernelEPlm"),
            Params::Integers(vec![at(0, 8), at(8, 8)])
        );
    }

    #[test]
    fn floating_point_and_classes_by_value_are_named() {
        assert_eq!(
            parse("_Z4fillPiid"),
            Params::Unsupported("a double parameter".into())
        );
        assert_eq!(
            parse("_Z5scalefPf"),
            Params::Unsupported("a float parameter".into())
        );
        assert!(matches!(parse("_Z1k4Pair"), Params::Unsupported(_)));
    }

    #[test]
    fn names_it_does_not_follow_are_unknown() {
        assert_eq!(parse("plain_c_kernel"), Params::Unknown);
        assert_eq!(parse("_Z1kIiEvPT_"), Params::Unknown);
        assert_eq!(parse("_Z3addPlS_l"), Params::Unknown); // S_: the earlier long *
    }
}
