//! Our header against LLVM 22.1's `offload/OffloadAPI.h` (Debian's `liboffload-22-dev`):
//! every enumerator has LLVM's value, every struct LLVM's size and field offsets, every
//! function LLVM's prototype.
//!
//! How: the test reads LLVM's header for the names, compiles and runs a probe against it
//! that prints each value, size and offset as LLVM's header defines them, then compiles a
//! C11 file of `_Static_assert`s of those numbers, plus LLVM's own prototypes, against
//! our installed-name header `offload/OffloadAPI.h`. The generated files stay in
//! `target/llvm-api-compat/` for reading when something differs.
//!
//! Without LLVM's header the test says so and passes, unless `OFFLOAD_REQUIRE_LLVM=1`
//! (set by scripts/test.sh, which installs the package) makes that a failure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_HEADER: &str = "/usr/lib/llvm-22/include/offload/OffloadAPI.h";

fn llvm_header() -> Option<PathBuf> {
    let path = std::env::var_os("LLVM_OFFLOAD_HEADER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_HEADER));
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var("OFFLOAD_REQUIRE_LLVM").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{} is missing (install liboffload-22-dev) and OFFLOAD_REQUIRE_LLVM=1",
        path.display()
    );
    eprintln!(
        "skipped: {} not found (install liboffload-22-dev)",
        path.display()
    );
    None
}

/// What LLVM's header declares, by name.
#[derive(Default)]
struct Declarations {
    /// (enum type, enumerator names)
    enums: Vec<(String, Vec<String>)>,
    /// (struct type, field names)
    structs: Vec<(String, Vec<String>)>,
    /// Each function prototype, as one line of text ending in ';'.
    prototypes: Vec<String>,
}

fn strip_comment(line: &str) -> &str {
    line.split("//").next().unwrap_or("").trim()
}

fn parse(header: &str) -> Declarations {
    let mut d = Declarations::default();
    let mut lines = header.lines().peekable();
    while let Some(raw) = lines.next() {
        let line = strip_comment(raw);
        if let Some(rest) = line.strip_prefix("typedef enum ") {
            let name = rest.trim_end_matches('{').trim().to_string();
            let mut values = Vec::new();
            for raw in lines.by_ref() {
                let l = strip_comment(raw);
                if l.starts_with('}') {
                    break;
                }
                if let Some((n, _)) = l.split_once('=') {
                    values.push(n.trim().to_string());
                }
            }
            d.enums.push((name, values));
        } else if let Some(rest) = line.strip_prefix("typedef struct ") {
            if !rest.ends_with('{') {
                continue; // a handle typedef: `typedef struct x_impl_t *x_handle_t;`
            }
            let name = rest.trim_end_matches('{').trim().to_string();
            let mut fields = Vec::new();
            for raw in lines.by_ref() {
                let l = strip_comment(raw);
                if l.starts_with('}') {
                    break;
                }
                if let Some(decl) = l.strip_suffix(';') {
                    let field = decl
                        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("");
                    fields.push(field.to_string());
                }
            }
            d.structs.push((name, fields));
        } else if line.starts_with("OL_APIEXPORT") {
            // A prototype, possibly over several lines, with comments between parameters.
            let mut text = line.to_string();
            while !text.ends_with(';') {
                let Some(next) = lines.next() else { break };
                let next = strip_comment(next);
                if !next.is_empty() {
                    text.push(' ');
                    text.push_str(next);
                }
            }
            d.prototypes.push(text);
        }
    }
    d
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("llvm-api-compat");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// Compiles and runs a program printing, per LLVM's header, `name = number` for every
/// enumerator, struct size and field offset.
fn llvm_numbers(header: &Path, d: &Declarations) -> String {
    let mut c = String::from(
        "#include <stdbool.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <OffloadAPI.h>\nint main(void) {\n",
    );
    for (_, values) in &d.enums {
        for v in values {
            writeln!(c, "  printf(\"{v} %lld\\n\", (long long){v});").unwrap();
        }
    }
    for (name, fields) in &d.structs {
        writeln!(c, "  printf(\"sizeof({name}) %zu\\n\", sizeof({name}));").unwrap();
        for f in fields {
            writeln!(
                c,
                "  printf(\"offsetof({name}, {f}) %zu\\n\", offsetof({name}, {f}));"
            )
            .unwrap();
        }
    }
    for (name, _) in &d.enums {
        writeln!(c, "  printf(\"sizeof({name}) %zu\\n\", sizeof({name}));").unwrap();
    }
    c.push_str("  return 0;\n}\n");
    let dir = out_dir();
    std::fs::write(dir.join("llvm_probe.c"), c).unwrap();
    run(Command::new(cc())
        .arg("-std=c11")
        .arg("-I")
        .arg(header.parent().unwrap())
        .arg(dir.join("llvm_probe.c"))
        .arg("-o")
        .arg(dir.join("llvm_probe")));
    run(&mut Command::new(dir.join("llvm_probe")))
}

#[test]
fn our_header_matches_llvm_22() {
    let Some(header) = llvm_header() else { return };
    let text = std::fs::read_to_string(&header).unwrap();
    let d = parse(&text);
    // Sanity: the parser found what LLVM 22.1's header has.
    assert!(d.enums.len() >= 12, "enums: {}", d.enums.len());
    assert!(d.structs.len() >= 30, "structs: {}", d.structs.len());
    assert!(
        d.prototypes.len() >= 60,
        "prototypes: {}",
        d.prototypes.len()
    );

    let mut c = String::from(
        "/* Generated by tests/llvm_api_compat.rs from LLVM 22.1's OffloadAPI.h. */\n\
         #include <offload/OffloadAPI.h>\n#include <stddef.h>\n\n",
    );
    let mut checks = 0;
    for line in llvm_numbers(&header, &d).lines() {
        let (what, number) = line.rsplit_once(' ').unwrap();
        writeln!(
            c,
            "_Static_assert({what} == {number}, \"{} is {number} in LLVM 22.1\");",
            what.replace('"', "'")
        )
        .unwrap();
        checks += 1;
    }
    c.push_str("\n/* LLVM's prototypes: a conflicting one is a compile error. */\n");
    for p in &d.prototypes {
        c.push_str(p);
        c.push('\n');
    }
    let file = out_dir().join("compat.c");
    std::fs::write(&file, &c).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    for std in ["-std=c11", "-std=c17"] {
        run(Command::new(cc())
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .arg("-I")
            .arg(&include)
            .arg(&file));
    }
    // The prototypes in C++ too, where enum and pointer types must match exactly.
    let mut cpp = String::from("#include <offload/OffloadAPI.h>\n");
    for p in &d.prototypes {
        cpp.push_str(&format!("extern \"C\" {p}\n"));
    }
    let cpp_file = out_dir().join("compat.cpp");
    std::fs::write(&cpp_file, cpp).unwrap();
    run(Command::new("c++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg("-I")
        .arg(&include)
        .arg(&cpp_file));
    eprintln!(
        "{checks} values, sizes and offsets and {} prototypes agree with {}",
        d.prototypes.len(),
        header.display()
    );
}

/// Each prototype's function name and parameter names.
fn parameter_names(prototypes: &[String]) -> Vec<(String, Vec<String>)> {
    let ident = |s: &str| {
        s.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("")
            .to_string()
    };
    prototypes
        .iter()
        .filter_map(|p| {
            let (head, params) = p.split_once('(')?;
            let params = params.trim_end_matches(';').trim_end_matches(')');
            let names = params
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty() && *p != "void")
                .map(ident)
                .collect();
            Some((ident(head.trim()), names))
        })
        .collect()
}

#[test]
fn parameters_have_llvm_names() {
    let Some(header) = llvm_header() else { return };
    let theirs = parameter_names(&parse(&std::fs::read_to_string(&header).unwrap()).prototypes);
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/offload/liboffload.h");
    let ours = parameter_names(&parse(&std::fs::read_to_string(ours).unwrap()).prototypes);
    assert!(theirs.len() >= 60);
    for (function, names) in &theirs {
        let mine = ours.iter().find(|(f, _)| f == function);
        assert_eq!(
            mine.map(|(_, n)| n),
            Some(names),
            "{function}: parameter names differ from LLVM's"
        );
    }
}

#[test]
fn parser_reads_enums_structs_and_prototypes() {
    let d = parse(
        "typedef enum x_t {\n  /// doc\n  X_A = 0,\n  X_B = 0x7fffffff\n} x_t;\n\
         typedef struct s_t {\n  int *pA; /// a\n  const char **pName;\n} s_t;\n\
         typedef struct h_impl_t *h_t;\n\
         OL_APIEXPORT ol_result_t OL_APICALL f(\n    // [in] a\n    int A,\n    int *B);\n",
    );
    assert_eq!(
        d.enums,
        vec![("x_t".into(), vec!["X_A".into(), "X_B".into()])]
    );
    assert_eq!(
        d.structs,
        vec![("s_t".into(), vec!["pA".into(), "pName".into()])]
    );
    assert_eq!(
        d.prototypes,
        vec!["OL_APIEXPORT ol_result_t OL_APICALL f( int A, int *B);".to_string()]
    );
}
