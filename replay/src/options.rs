//! The command line.

use std::path::PathBuf;

pub const USAGE: &str = "usage: offload-replay [--verify] [--device N] [--repeat K] \
[--groups X,Y,Z] [--group-size X,Y,Z] [--json] RECORD...";

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub verify: bool,
    /// The device, by its position in liboffload's device list (`olIterateDevices`);
    /// by default the first of the recorded backend.
    pub device: Option<usize>,
    pub repeat: usize,
    pub groups: Option<[u32; 3]>,
    pub group_size: Option<[u32; 3]>,
    pub json: bool,
    pub records: Vec<PathBuf>,
}

pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        repeat: 1,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs {what}"))
        };
        match name {
            "--verify" => opts.verify = true,
            "--json" => opts.json = true,
            "--device" => opts.device = Some(number(&value("a device number")?, name)?),
            "--repeat" => {
                opts.repeat = number(&value("a count")?, name)?;
                if opts.repeat == 0 {
                    return Err("--repeat 0: at least one launch".into());
                }
            }
            "--groups" => opts.groups = Some(triple(&value("X,Y,Z")?, name)?),
            "--group-size" => opts.group_size = Some(triple(&value("X,Y,Z")?, name)?),
            "--help" | "-h" => return Err("".into()),
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            _ => opts.records.push(PathBuf::from(arg)),
        }
    }
    if opts.records.is_empty() {
        return Err("no record given".into());
    }
    Ok(opts)
}

fn number(text: &str, option: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{option} {text}: a whole number expected"))
}

/// `X`, `X,Y` or `X,Y,Z`, each at least 1 (missing ones are 1).
fn triple(text: &str, option: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 3 {
        return Err(format!("{option} {text}: at most three extents"));
    }
    let mut out = [1u32; 3];
    for (slot, part) in out.iter_mut().zip(&parts) {
        *slot = part
            .trim()
            .parse()
            .ok()
            .filter(|&v: &u32| v >= 1)
            .ok_or_else(|| format!("{option} {text}: extents of at least 1 expected"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_read_as_documented() {
        let o = parse(&args(&[
            "--verify",
            "--device",
            "2",
            "--repeat=5",
            "--groups",
            "8,2",
            "--group-size=64",
            "--json",
            "a.offrec",
            "dir",
        ]))
        .unwrap();
        assert!(o.verify && o.json);
        assert_eq!(o.device, Some(2));
        assert_eq!(o.repeat, 5);
        assert_eq!(o.groups, Some([8, 2, 1]));
        assert_eq!(o.group_size, Some([64, 1, 1]));
        assert_eq!(o.records.len(), 2);
    }

    #[test]
    fn bad_options_are_refused() {
        for bad in [
            &["--repeat", "0", "r"][..],
            &["--groups", "0,1", "r"],
            &["--groups", "1,2,3,4", "r"],
            &["--device", "x", "r"],
            &["--frobnicate", "r"],
            &["--verify"],
            &["--device"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
