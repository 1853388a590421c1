//! CUDA PTX text: version, target (`sm_XX`), address size, and each `.entry` kernel with
//! its parameter list. Only declarations are read; instructions are skipped.

use super::bytes::before_nul;
use crate::plugin::foundation::error::{Error, Result};
use std::borrow::Cow;

/// A `.param` of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxParam {
    pub name: String,
    /// The PTX type, e.g. `.u64`, `.f32`, `.b8`.
    pub ty: String,
    pub align: Option<u32>,
    /// `name[N]`: an array of N elements (by-value structs are `.b8 name[size]`).
    pub array_len: Option<u64>,
    /// `.ptr .global` and friends: the state space a pointer parameter points into.
    pub pointer_space: Option<String>,
}

/// A kernel (`.entry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    pub name: String,
    pub params: Vec<PtxParam>,
}

/// A parsed PTX module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxModule {
    /// `.version major.minor` (the PTX ISA version).
    pub version: (u32, u32),
    /// The `.target` list as written, e.g. `sm_80` or `sm_90a, debug`.
    pub target: String,
    /// The SM number of the target (`sm_90a` gives 90).
    pub sm: u32,
    /// `sm_90a`-style architecture-specific targets run only on that exact SM.
    pub arch_specific: bool,
    pub address_size: Option<u32>,
    pub entries: Vec<PtxEntry>,
}

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::invalid_binary(format!("malformed PTX: {msg}"))
}

/// Removes `//` and `/* */` comments in one pass, keeping line structure (the newlines
/// inside a block comment go with it).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = Uncommented::new(text);
    while let Some((line, newline)) = lines.next_line() {
        out.push_str(&line);
        if newline {
            out.push('\n');
        }
    }
    out
}

/// What loading a PTX module needs to know before the JIT sees it: the version and the
/// target (and the address size where it is given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxHeader {
    pub version: (u32, u32),
    pub target: String,
    pub sm: u32,
    pub arch_specific: bool,
    pub address_size: Option<u32>,
}

/// Parses the PTX text (trailing NULs allowed): the header and every `.entry`.
pub fn parse_ptx(bytes: &[u8]) -> Result<PtxModule> {
    let text = ptx_text(bytes)?;
    let text = strip_comments(text);
    let header = header_of(text.lines().map(Cow::Borrowed), false)?;
    Ok(PtxModule {
        version: header.version,
        sm: header.sm,
        arch_specific: header.arch_specific,
        target: header.target,
        address_size: header.address_size,
        entries: entries_of(&text)?,
    })
}

/// The header of PTX text (trailing NULs allowed), read up to the directives it needs: a
/// module's own directives come before its code, so a large module is not read through
/// (choosing an image and loading it need nothing more; the JIT reads the rest).
pub fn parse_ptx_header(bytes: &[u8]) -> Result<PtxHeader> {
    let text = ptx_text(bytes)?;
    header_of(Uncommented::new(text), true)
}

fn ptx_text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(before_nul(bytes)).map_err(|e| bad(format!("not UTF-8 text ({e})")))
}

/// Reads `.version`, `.target` and `.address_size` from `lines` (comments already
/// removed); with `stop_early`, stops at the first line after the first two that is no
/// module directive, or once all three are read.
fn header_of<'a>(lines: impl Iterator<Item = Cow<'a, str>>, stop_early: bool) -> Result<PtxHeader> {
    let mut version = None;
    let mut target = None;
    let mut address_size = None;
    for line in lines {
        let mut words = line.split_whitespace();
        match words.next() {
            Some(".version") if version.is_none() => {
                let v = words.next().unwrap_or("");
                let (maj, min) = v.split_once('.').unwrap_or((v, ""));
                version = Some((
                    maj.parse()
                        .map_err(|_| bad(format!(".version {v:?} is not major.minor")))?,
                    min.parse()
                        .map_err(|_| bad(format!(".version {v:?} is not major.minor")))?,
                ));
            }
            Some(".target") if target.is_none() => {
                target = Some(words.collect::<Vec<_>>().join(" "));
            }
            Some(".address_size") if address_size.is_none() => {
                address_size = words.next().and_then(|w| w.parse().ok());
            }
            Some(_) if stop_early && version.is_some() && target.is_some() => break,
            _ => {}
        }
        if stop_early && version.is_some() && target.is_some() && address_size.is_some() {
            break;
        }
    }
    let version = version.ok_or_else(|| bad("no .version directive"))?;
    let target = target.ok_or_else(|| bad("no .target directive"))?;
    let sm_name = target
        .split(|c: char| c == ',' || c.is_whitespace())
        .find(|t| t.starts_with("sm_"))
        .ok_or_else(|| bad(format!(".target {target:?} names no sm_XX architecture")))?;
    let digits: String = sm_name[3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let sm = digits
        .parse()
        .map_err(|_| bad(format!(".target {sm_name:?} has no SM number")))?;
    let arch_specific = sm_name.len() > 3 + digits.len();
    Ok(PtxHeader {
        version,
        target,
        sm,
        arch_specific,
        address_size,
    })
}

/// The lines of PTX text with their comments removed, one line at a time (a comment
/// that spans lines leaves the lines it spans empty). A line without a comment is handed
/// out as it is, not copied.
struct Uncommented<'a> {
    rest: &'a str,
    in_block: bool,
}

impl<'a> Uncommented<'a> {
    fn new(text: &'a str) -> Self {
        Uncommented {
            rest: text,
            in_block: false,
        }
    }

    /// The next line without its comments, and whether the newline after it stands (the
    /// text goes on, outside a block comment).
    fn next_line(&mut self) -> Option<(Cow<'a, str>, bool)> {
        if self.rest.is_empty() {
            return None;
        }
        let (raw, rest, ended) = match self.rest.split_once('\n') {
            Some((raw, rest)) => (raw, rest, true),
            None => (self.rest, "", false),
        };
        self.rest = rest;
        if !self.in_block && !raw.contains('/') {
            return Some((Cow::Borrowed(raw), ended));
        }
        let mut line = String::with_capacity(raw.len());
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if self.in_block {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    self.in_block = false;
                    line.push(' ');
                }
                continue;
            }
            match (c, chars.peek()) {
                ('/', Some('/')) => break,
                ('/', Some('*')) => {
                    chars.next();
                    self.in_block = true;
                }
                _ => line.push(c),
            }
        }
        Some((Cow::Owned(line), ended && !self.in_block))
    }
}

impl<'a> Iterator for Uncommented<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        self.next_line().map(|(line, _)| line)
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '%')
}

fn entries_of(text: &str) -> Result<Vec<PtxEntry>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(".entry") {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .map_or(true, char::is_whitespace);
        let after = &rest[at + ".entry".len()..];
        rest = after;
        if !before_ok || !after.starts_with(char::is_whitespace) {
            continue;
        }
        let after = after.trim_start();
        let name_len = after
            .find(|c: char| !is_ident_char(c))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        if name.is_empty() {
            return Err(bad(".entry without a name"));
        }
        let tail = after[name_len..].trim_start();
        let mut params = Vec::new();
        if let Some(list) = tail.strip_prefix('(') {
            let close = list
                .find(')')
                .ok_or_else(|| bad(format!("parameter list of .entry {name} is not closed")))?;
            for p in list[..close]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                params.push(param_of(p).map_err(|e| e.context(format!(".entry {name}")))?);
            }
            rest = &list[close..];
        }
        out.push(PtxEntry {
            name: name.to_owned(),
            params,
        });
    }
    Ok(out)
}

const SPACES: &[&str] = &[".global", ".shared", ".const", ".local"];

fn param_of(p: &str) -> Result<PtxParam> {
    let words: Vec<&str> = p.split_whitespace().collect();
    if words.first() != Some(&".param") || words.len() < 3 {
        return Err(bad(format!(
            "parameter {p:?} is not `.param <type> <name>`"
        )));
    }
    let decl = words[words.len() - 1];
    let (name, array_len) = match decl.split_once('[') {
        Some((n, len)) => {
            let len = len.trim_end_matches(']');
            let parsed = len
                .parse()
                .map_err(|_| bad(format!("parameter {n} has array length {len:?}")))?;
            (n, Some(parsed))
        }
        None => (decl, None),
    };
    let attrs = &words[1..words.len() - 1];
    let mut ty = None;
    let mut align = None;
    let mut pointer_space = None;
    let mut i = 0;
    while i < attrs.len() {
        match attrs[i] {
            ".align" => {
                align = attrs.get(i + 1).and_then(|a| a.parse().ok());
                i += 1;
            }
            ".ptr" => {}
            s if SPACES.contains(&s) => pointer_space = Some(s.trim_start_matches('.').to_owned()),
            t if ty.is_none() && t.starts_with('.') => ty = Some(t.to_owned()),
            _ => {}
        }
        i += 1;
    }
    Ok(PtxParam {
        name: name.to_owned(),
        ty: ty.ok_or_else(|| bad(format!("parameter {name} has no type")))?,
        align,
        array_len,
        pointer_space,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_with_attributes() {
        let m = parse_ptx(
            b".version 8.0 /* c */\n.target sm_90a\n.address_size 64\n\
              .visible .entry k(\n .param .u64 .ptr .global .align 4 k_p0,\n .param .align 8 .b8 k_p1[24]\n)\n{ ret; }\n\0",
        )
        .unwrap();
        assert_eq!((m.version, m.sm, m.arch_specific), ((8, 0), 90, true));
        let p = &m.entries[0].params;
        assert_eq!(p[0].pointer_space.as_deref(), Some("global"));
        assert_eq!((p[0].ty.as_str(), p[0].align), (".u64", Some(4)));
        assert_eq!(
            (p[1].ty.as_str(), p[1].array_len, p[1].align),
            (".b8", Some(24), Some(8))
        );
    }

    #[test]
    fn comments_are_stripped() {
        assert_eq!(
            strip_comments("a // b\nc /* d\n e */ f /*/ g */h"),
            "a \nc   f  h"
        );
        // Many comments stay linear: this would take seconds if each scan restarted.
        let many = "//\n".repeat(200_000);
        assert_eq!(strip_comments(&many).len(), 200_000);
    }

    #[test]
    fn the_header_alone_agrees_with_the_whole_parse() {
        let samples: [&[u8]; 4] = [
            b".version 8.0 /* c */\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{ ret; }\n\0",
            b"// generated\n/* a\n .target sm_50\n */ .version 7.0\n.target sm_80, debug // x\n\n.address_size 32\n",
            b".version 7.8\n.target sm_75\n.visible .entry k()\n{ ret; }\n",
            b"//\n//\n.version 6.4 // v\n/**/.target sm_70\n",
        ];
        for bytes in samples {
            let whole = parse_ptx(bytes).unwrap();
            let header = parse_ptx_header(bytes).unwrap();
            assert_eq!(
                (
                    header.version,
                    header.target.as_str(),
                    header.sm,
                    header.arch_specific
                ),
                (
                    whole.version,
                    whole.target.as_str(),
                    whole.sm,
                    whole.arch_specific
                ),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        // Read no further than the directives: code after them is not looked at.
        let mut big = b".version 7.0\n.target sm_80\n.address_size 64\n".to_vec();
        big.extend(b".visible .entry k( .param .u32 a\n".repeat(1000)); // never closed
        assert!(parse_ptx(&big).is_err());
        assert_eq!(parse_ptx_header(&big).unwrap().sm, 80);
        assert!(parse_ptx_header(b".version 7.0\n.visible .entry k()\n").is_err());
    }

    #[test]
    fn unterminated_comment_and_list() {
        assert!(parse_ptx(b".version 7.0\n.target sm_80\n/* never closed").is_ok());
        assert!(parse_ptx(b".version 7.0\n.target sm_80\n.entry k( .param .u32 a").is_err());
    }
}
