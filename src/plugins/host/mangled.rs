//! The parameter types of a kernel, read from its mangled name (Itanium C++ ABI): the
//! one record of a kernel's signature that every host-target image carries. Builtin
//! types and pointers are given exactly; a class or enum by value only by its name (its
//! layout, or whether it is an enum at all, is not in the name). Function templates and
//! substitutions (`S_`, `T_`) are followed; what this reader does not follow (local
//! names, operators, packs, function or member-pointer types) reads as `Unknown`.

use super::c_call::CType;

/// One parameter, as its mangled type says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    Known(CType),
    /// A class or enum by value, by its (qualified) name.
    Named(String),
}

/// What the name says of the parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    Params(Vec<Param>),
    /// A parameter the host device cannot pass (described in the text).
    Unsupported(String),
    /// Not a mangled name this reader follows (`extern "C"` names among them).
    Unknown,
}

/// Reads the parameter list of the mangled function name `name`.
pub fn parameters(name: &str) -> Reading {
    let Some(rest) = name.strip_prefix("_Z") else {
        return Reading::Unknown;
    };
    let mut p = Parser {
        s: rest.as_bytes(),
        pos: 0,
        subs: Vec::new(),
        template_args: Vec::new(),
    };
    let Some(types) = p.encoding() else {
        return Reading::Unknown;
    };
    let mut params = Vec::with_capacity(types.len());
    for t in types {
        match t {
            Ty::Known(c) => params.push(Param::Known(c)),
            Ty::Named(n) => params.push(Param::Named(n)),
            Ty::Unsupported(what) => return Reading::Unsupported(what),
        }
    }
    Reading::Params(params)
}

/// A type met while reading (also what the substitution table and template arguments
/// hold; a name prefix is held as `Named`).
#[derive(Clone, Debug)]
enum Ty {
    Known(CType),
    Named(String),
    Unsupported(String),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// The substitution candidates so far, in order (`S_`, `S0_`, ...).
    subs: Vec<Ty>,
    /// The function template's arguments (`T_`, `T0_`, ...).
    template_args: Vec<Ty>,
}

fn int(size: usize, signed: bool) -> Ty {
    Ty::Known(CType::Int { size, signed })
}

fn unsupported(what: &str) -> Ty {
    Ty::Unsupported(what.to_string())
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        self.pos += usize::from(found);
        found
    }

    /// `<encoding>` of a function: its parameter types.
    fn encoding(&mut self) -> Option<Vec<Ty>> {
        let (_, args) = self.name(false)?;
        if let Some(args) = args {
            // A function template: its arguments are what `T_` refers to, and its
            // return type comes first.
            self.template_args = args;
            self.type_()?;
        }
        if &self.s[self.pos..] == b"v" {
            return Some(Vec::new());
        }
        let mut params = Vec::new();
        while self.peek().is_some() {
            params.push(self.type_()?);
        }
        (!params.is_empty()).then_some(params)
    }

    /// `<source-name>`: a length and that many characters.
    fn source_name(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let length: usize = std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .parse()
            .ok()?;
        let end = self.pos.checked_add(length)?;
        let text = std::str::from_utf8(self.s.get(self.pos..end)?).ok()?;
        self.pos = end;
        (length > 0).then(|| text.to_string())
    }

    /// A `<name>` (a function's, or a class type's when `is_type`): its text and the
    /// template arguments that end it, if any. Adds its substitution candidates.
    fn name(&mut self, is_type: bool) -> Option<(String, Option<Vec<Ty>>)> {
        match self.peek()? {
            b'N' => {
                self.pos += 1;
                self.nested_name(is_type)
            }
            b'S' if self.s.get(self.pos + 1) == Some(&b't') => {
                self.pos += 2;
                let name = format!("std::{}", self.source_name()?);
                self.unscoped(name, is_type)
            }
            b'0'..=b'9' => {
                let name = self.source_name()?;
                self.unscoped(name, is_type)
            }
            _ => None,
        }
    }

    /// An unscoped name, perhaps a template's followed by its arguments.
    fn unscoped(&mut self, mut name: String, is_type: bool) -> Option<(String, Option<Vec<Ty>>)> {
        let mut args = None;
        if self.peek() == Some(b'I') {
            self.subs.push(Ty::Named(name.clone()));
            let a = self.template_args()?;
            name = format!("{name}<{}>", a.len());
            args = Some(a);
        }
        if is_type {
            self.subs.push(Ty::Named(name.clone()));
        }
        Some((name, args))
    }

    /// `N [<CV-qualifiers>] [<ref-qualifier>] <prefix components> E`, after the `N`.
    fn nested_name(&mut self, is_type: bool) -> Option<(String, Option<Vec<Ty>>)> {
        while matches!(self.peek(), Some(b'r' | b'V' | b'K')) {
            self.pos += 1;
        }
        if matches!(self.peek(), Some(b'R' | b'O')) {
            self.pos += 1;
        }
        let mut current = String::new();
        let mut args = None;
        // Whether `current` came from a substitution as it is (then not added again).
        let mut from_substitution;
        loop {
            match self.peek()? {
                b'S' => {
                    if !current.is_empty() {
                        return None;
                    }
                    self.pos += 1;
                    current = match self.substitution()? {
                        Ty::Named(n) => n,
                        _ => return None,
                    };
                    from_substitution = true;
                }
                b'0'..=b'9' => {
                    let part = self.source_name()?;
                    current = if current.is_empty() {
                        part
                    } else {
                        format!("{current}::{part}")
                    };
                    from_substitution = false;
                    args = None;
                }
                b'I' if !current.is_empty() => {
                    let a = self.template_args()?;
                    current = format!("{current}<{}>", a.len());
                    args = Some(a);
                    from_substitution = false;
                }
                // Template parameters as prefixes, constructors, destructors, operators,
                // local and unnamed types: not followed.
                _ => return None,
            }
            let more = self.peek()? != b'E';
            // Every prefix is a candidate, and so is the whole name of a type; a
            // function's own name is not.
            if !from_substitution && (more || is_type) {
                self.subs.push(Ty::Named(current.clone()));
            }
            if !more {
                self.pos += 1;
                return Some((current, args));
            }
        }
    }

    /// After `S`: a substitution (`S_`, `S<seq-id>_`) or a standard abbreviation.
    fn substitution(&mut self) -> Option<Ty> {
        let abbreviation = match self.peek()? {
            b't' => Some("std"),
            b'a' => Some("std::allocator"),
            b'b' => Some("std::basic_string"),
            b's' => Some("std::string"),
            b'i' => Some("std::istream"),
            b'o' => Some("std::ostream"),
            b'd' => Some("std::iostream"),
            _ => None,
        };
        if let Some(a) = abbreviation {
            self.pos += 1;
            return Some(Ty::Named(a.to_string()));
        }
        let mut index = 0usize;
        if !self.eat(b'_') {
            let mut seq = 0usize;
            loop {
                let c = self.next()?;
                let digit = match c {
                    b'0'..=b'9' => c - b'0',
                    b'A'..=b'Z' => c - b'A' + 10,
                    b'_' => break,
                    _ => return None,
                };
                seq = seq.checked_mul(36)?.checked_add(usize::from(digit))?;
            }
            index = seq.checked_add(1)?;
        }
        self.subs.get(index).cloned()
    }

    /// `I <template-arg>+ E`.
    fn template_args(&mut self) -> Option<Vec<Ty>> {
        if !self.eat(b'I') {
            return None;
        }
        let mut args = Vec::new();
        while !self.eat(b'E') {
            match self.peek()? {
                b'L' => {
                    // A literal value: its type, then its digits, then E.
                    self.pos += 1;
                    if self.peek() == Some(b'_') {
                        return None;
                    }
                    self.type_()?;
                    while self.next()? != b'E' {}
                    args.push(unsupported("a value"));
                }
                // Expressions and packs: not followed.
                b'X' | b'J' => return None,
                _ => args.push(self.type_()?),
            }
        }
        Some(args)
    }

    /// A `<type>`, adding its substitution candidates.
    fn type_(&mut self) -> Option<Ty> {
        let c = self.peek()?;
        let builtin = match c {
            b'v' => Some(unsupported("a void parameter")),
            b'b' | b'h' => Some(int(1, false)),
            b'c' | b'a' => Some(int(1, true)),
            b's' => Some(int(2, true)),
            b't' => Some(int(2, false)),
            b'i' | b'w' => Some(int(4, true)),
            b'j' => Some(int(4, false)),
            b'l' | b'x' => Some(int(8, true)),
            b'm' | b'y' => Some(int(8, false)),
            b'f' => Some(Ty::Known(CType::F32)),
            b'd' => Some(Ty::Known(CType::F64)),
            b'e' => Some(Ty::Known(CType::LongDouble)),
            b'g' => Some(unsupported("a __float128 parameter")),
            b'n' | b'o' => Some(unsupported("an __int128 parameter")),
            b'z' => Some(unsupported("variadic parameters (...)")),
            _ => None,
        };
        if let Some(t) = builtin {
            self.pos += 1;
            return Some(t);
        }
        let t = match c {
            b'D' => {
                self.pos += 1;
                match self.next()? {
                    b'n' => return Some(Ty::Known(CType::Pointer)),
                    b'u' => return Some(int(1, false)),
                    b's' => return Some(int(2, false)),
                    b'i' => return Some(int(4, false)),
                    b'h' => return Some(unsupported("a half-precision parameter")),
                    b'F' => {
                        while self.next()? != b'_' {}
                        return Some(unsupported("a _FloatN parameter"));
                    }
                    b'v' => {
                        while self.next()? != b'_' {}
                        self.type_()?;
                        unsupported("a vector parameter")
                    }
                    _ => return None,
                }
            }
            b'r' | b'V' | b'K' => {
                while matches!(self.peek(), Some(b'r' | b'V' | b'K')) {
                    self.pos += 1;
                }
                // A qualified type is passed as the type is.
                self.type_()?
            }
            b'P' | b'R' | b'O' => {
                // A pointer or reference to anything is passed as a pointer.
                self.pos += 1;
                self.type_()?;
                Ty::Known(CType::Pointer)
            }
            b'T' => {
                self.pos += 1;
                if matches!(self.peek(), Some(b's' | b'u' | b'e')) {
                    // An elaborated `struct`/`union`/`enum` name.
                    self.pos += 1;
                    return Some(Ty::Named(self.name(true)?.0));
                }
                let mut index = 0usize;
                if !self.eat(b'_') {
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    index = std::str::from_utf8(&self.s[start..self.pos])
                        .ok()?
                        .parse::<usize>()
                        .ok()?
                        .checked_add(1)?;
                    if !self.eat(b'_') {
                        return None;
                    }
                }
                if self.peek() == Some(b'I') {
                    return None; // a template template parameter
                }
                self.template_args.get(index).cloned()?
            }
            b'S' if self.s.get(self.pos + 1) != Some(&b't') => {
                self.pos += 1;
                let t = self.substitution()?;
                if self.peek() != Some(b'I') {
                    return Some(t); // used as it is: not a new candidate
                }
                let Ty::Named(template) = t else {
                    return None;
                };
                let args = self.template_args()?;
                Ty::Named(format!("{template}<{}>", args.len()))
            }
            // A class or enum name (its candidates are added by `name`).
            b'0'..=b'9' | b'N' | b'S' => return Some(Ty::Named(self.name(true)?.0)),
            // Function, array and member-pointer types, vendor types: not followed.
            _ => return None,
        };
        self.subs.push(t.clone());
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(types: &[CType]) -> Reading {
        Reading::Params(types.iter().cloned().map(Param::Known).collect())
    }

    const P: CType = CType::Pointer;
    const I32: CType = CType::Int {
        size: 4,
        signed: true,
    };
    const I64: CType = CType::Int {
        size: 8,
        signed: true,
    };
    const U64: CType = CType::Int {
        size: 8,
        signed: false,
    };

    #[test]
    fn builtins_and_pointers() {
        assert_eq!(parameters("_Z3addPlPKll"), known(&[P, P, I64]));
        assert_eq!(parameters("_Z4fillPii"), known(&[P, I32]));
        assert_eq!(parameters("_Z4noopv"), known(&[]));
        assert_eq!(parameters("_ZN2ns6kernelEPlm"), known(&[P, U64]));
        assert_eq!(
            parameters("_Z5mixedPiild"),
            known(&[P, I32, I64, CType::F64])
        );
        assert_eq!(
            parameters("_Z5scalefPfe"),
            known(&[CType::F32, P, CType::LongDouble])
        );
        let narrow = |size, signed| CType::Int { size, signed };
        assert_eq!(
            parameters("_Z1kbcahstwjDnDuDsDi"),
            known(&[
                narrow(1, false),
                narrow(1, true),
                narrow(1, true),
                narrow(1, false),
                narrow(2, true),
                narrow(2, false),
                I32,
                narrow(4, false),
                P,
                narrow(1, false),
                narrow(2, false),
                narrow(4, false),
            ])
        );
    }

    #[test]
    fn classes_by_value_are_named() {
        let named = |n: &str| Param::Named(n.to_string());
        assert_eq!(
            parameters("_Z2kp1PPf"),
            Reading::Params(vec![named("P"), Param::Known(P)])
        );
        assert_eq!(
            parameters("_Z1kN2ns4PairES0_"),
            Reading::Params(vec![named("ns::Pair"), named("ns::Pair")])
        );
        // A pointer to a class is a pointer.
        assert_eq!(parameters("_Z1kP4PairRKS_"), known(&[P, P]));
        assert_eq!(
            parameters("_Z1kSt4pairIifE"),
            Reading::Params(vec![named("std::pair<2>")])
        );
    }

    #[test]
    fn substitutions_and_templates() {
        // void add(long *, long *, long): S_ is the first long *.
        assert_eq!(parameters("_Z3addPlS_l"), known(&[P, P, I64]));
        // template <class T> void axpy(T, T *, T *) with T = float.
        assert_eq!(
            parameters("_Z4axpyIfEvT_PS0_S1_"),
            known(&[CType::F32, P, P])
        );
        // template <class T, int N> void k(T *, double) in a namespace, T = int.
        assert_eq!(parameters("_ZN2ns1kIiLi4EEEvPT_d"), known(&[P, CType::F64]));
        // A template argument that is a class, passed by value.
        assert_eq!(
            parameters("_Z1kI1PEvT_"),
            Reading::Params(vec![Param::Named("P".into())])
        );
        // const char * twice: PKc, then S0_ (S_ is `const char`).
        assert_eq!(parameters("_Z1kPKcS0_"), known(&[P, P]));
    }

    #[test]
    fn what_cannot_be_passed_is_named() {
        assert_eq!(
            parameters("_Z1knPi"),
            Reading::Unsupported("an __int128 parameter".into())
        );
        assert_eq!(
            parameters("_Z1kDF16_Pi"),
            Reading::Unsupported("a _FloatN parameter".into())
        );
        assert_eq!(
            parameters("_Z1kDv4_fPf"),
            Reading::Unsupported("a vector parameter".into())
        );
        assert_eq!(
            parameters("_Z1kiz"),
            Reading::Unsupported("variadic parameters (...)".into())
        );
    }

    #[test]
    fn names_it_does_not_follow_are_unknown() {
        for name in [
            "plain_c_kernel",
            "_Z",
            "_Z1",
            "_Z9k",
            "_Z1kPFviE",       // a pointer to a function type
            "_Z1kA4_i",        // an array type
            "_Z1kIJidEEvDpT_", // a pack
            "_ZZ4mainE1k",     // a local name
            "_Z1kS5_",         // a substitution that does not exist
            "_Z1kT_",          // a template parameter outside a template
            "_Z1ki.cold",
        ] {
            assert_eq!(parameters(name), Reading::Unknown, "{name}");
        }
    }
}
