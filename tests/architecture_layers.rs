//! The import rules of docs/ARCHITECTURE.md, checked on the sources: which top folder of
//! `src/` and of `omptarget/src/` may name which (`crate::<folder>`), no circle between
//! folders, no backend naming another, the foundation naming nothing of the crate, what
//! the other crates of the workspace use of liboffload, and where omptarget's exported
//! functions live.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top folder of `src/` and what it may import besides itself (`crate::` path
/// prefixes), from the bottom up: the foundation, the plugin interface, the image
/// reader and the memory manager, the backends, the runtime, the C API.
const ALLOWED: &[(&str, &[&str])] = &[
    ("plugin", &[]),
    ("image", &["plugin::foundation"]),
    ("memory", &["plugin"]),
    ("plugins", &["plugin", "image"]),
    ("record", &[]),
    ("runtime", &["plugin", "plugins", "memory", "record"]),
    ("capi", &["runtime", "plugin"]),
];

/// The same for the folders of `omptarget/src/`, from the bottom up: the C ABI, the
/// reporting every layer uses, the OMPT events they report to a tool, the plugin work
/// done through liboffload, the mapping
/// table and data movement, the OpenMP devices, launching, and the exported functions.
const OMPTARGET_ALLOWED: &[(&str, &[&str])] = &[
    ("abi", &[]),
    ("report", &["abi"]),
    ("plugin", &["abi", "report"]),
    ("ompt", &["abi", "report", "plugin"]),
    ("mapping", &["abi", "report", "ompt", "plugin"]),
    ("devices", &["abi", "report", "ompt", "plugin", "mapping"]),
    (
        "launch",
        &["abi", "report", "ompt", "plugin", "mapping", "devices"],
    ),
    (
        "entry",
        &[
            "abi", "report", "ompt", "plugin", "mapping", "devices", "launch",
        ],
    ),
    (
        "omp_api",
        &["abi", "report", "ompt", "plugin", "mapping", "devices"],
    ),
];

/// The folders of `omptarget/src/` whose functions the libraries export.
const OMPTARGET_EXPORTING: &[&str] = &["entry", "omp_api"];

/// What the other crates may use of liboffload (`offload::<path>` prefixes).
const OTHER_CRATES: &[(&str, &[&str])] = &[
    (
        "omptarget/src",
        &["capi", "runtime::profile", "plugin::foundation"],
    ),
    (
        "remote-mpi/src",
        &[
            "plugin",
            "plugins::available",
            "plugins::remote::wire",
            "plugins::remote::fragments",
            "plugins::remote::settings",
        ],
    ),
    (
        "replay/src",
        &[
            "capi",
            "record::format",
            "runtime::profile::json_string",
            "runtime::with_current",
            "runtime::Error",
            "plugin::AllocKind",
        ],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (a doc comment may name any path).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths named after `prefix` (`crate::`, `offload::`): each as `a::b::c`.
fn named_paths(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        found.push(path.trim_end_matches(':').to_string());
    }
    found
}

/// Every `crate::` path a file of a top folder of `src` names outside its folder:
/// (folder, path, file relative to `src`).
fn folder_imports(src: &Path) -> Vec<(String, String, PathBuf)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut imports = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().to_path_buf();
        let mut parts = relative.components();
        let first = parts
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        if parts.next().is_none() {
            continue; // lib.rs
        }
        for path in named_paths(&code_of(&file), "crate::") {
            if path.split("::").next() != Some(first.as_str()) {
                imports.push((first.clone(), path, relative.clone()));
            }
        }
    }
    imports
}

fn starts_with_path(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}::"))
}

/// `src` (relative to the workspace) against its table of allowed imports.
fn check_layers(src: &str, table: &[(&str, &[&str])]) {
    let allowed: BTreeMap<&str, &[&str]> = table.iter().copied().collect();
    let mut wrong = Vec::new();
    for (folder, path, file) in folder_imports(&root().join(src)) {
        match allowed.get(folder.as_str()) {
            None => wrong.push(format!(
                "{src}/{folder}/ is a folder docs/ARCHITECTURE.md does not place"
            )),
            Some(may) if !may.iter().any(|p| starts_with_path(&path, p)) => wrong.push(format!(
                "{src}/{} imports crate::{path}, which {folder}/ may not (it may: {may:?})",
                file.display()
            )),
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// No top folder of `src` reaches itself through the folders it imports.
fn check_no_circle(src: &str) {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (folder, path, _) in folder_imports(&root().join(src)) {
        let top = path.split("::").next().unwrap_or("").to_string();
        graph.entry(folder).or_default().insert(top);
    }
    // Depth-first search for a path back to where it started.
    fn reaches(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        to: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        graph.get(from).is_some_and(|next| {
            next.iter()
                .any(|n| n == to || (seen.insert(n.clone()) && reaches(graph, n, to, seen)))
        })
    }
    for folder in graph.keys() {
        assert!(
            !reaches(&graph, folder, folder, &mut BTreeSet::new()),
            "{src}/{folder}/ reaches itself through its imports: {graph:?}"
        );
    }
}

/// Imports that would hide their folders from the checks above: `crate::{a, b}`.
fn check_imports_name_their_folders(src: &str) {
    let mut files = Vec::new();
    rust_files(&root().join(src), &mut files);
    for file in files {
        let code = code_of(&file);
        assert!(
            !code.contains("crate::{"),
            "{}: a grouped `crate::{{...}}` import; name each folder in its own `use`",
            file.display()
        );
    }
}

#[test]
fn each_folder_imports_only_the_layers_below_it() {
    check_layers("src", ALLOWED);
}

#[test]
fn each_omptarget_folder_imports_only_the_layers_below_it() {
    check_layers("omptarget/src", OMPTARGET_ALLOWED);
}

#[test]
fn no_circle_between_folders() {
    check_no_circle("src");
    check_no_circle("omptarget/src");
}

#[test]
fn the_foundation_names_nothing_of_the_crate_above_it() {
    let mut files = Vec::new();
    rust_files(&root().join("src/plugin/foundation"), &mut files);
    assert!(!files.is_empty());
    for file in files {
        for path in named_paths(&code_of(&file), "crate::") {
            assert!(
                path.starts_with("plugin::foundation"),
                "{} names crate::{path}: the foundation stands on nothing of the crate",
                file.display()
            );
        }
    }
}

#[test]
fn no_backend_names_another() {
    let plugins = root().join("src/plugins");
    for entry in std::fs::read_dir(&plugins).unwrap() {
        let folder = entry.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        let mut files = Vec::new();
        rust_files(&folder, &mut files);
        for file in files {
            for path in named_paths(&code_of(&file), "crate::plugins::") {
                assert!(
                    path.starts_with(&name),
                    "{} names crate::plugins::{path}: a backend holds only its own vendor's code",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn the_other_crates_use_only_what_is_theirs() {
    for (dir, may) in OTHER_CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        assert!(!files.is_empty(), "{dir}");
        for file in files {
            for path in named_paths(&code_of(&file), "offload::") {
                assert!(
                    may.iter().any(|p| starts_with_path(&path, p)),
                    "{} uses offload::{path}; {dir} may use {may:?}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn every_import_names_its_folder() {
    check_imports_name_their_folders("src");
    check_imports_name_their_folders("omptarget/src");
}

#[test]
fn omptarget_exports_only_from_its_top_folders_and_inside_the_boundary() {
    // A function the libraries export is an entry point: it belongs to a top folder, and
    // its body runs in `report::boundary`, so that a panic never crosses into C.
    let src = root().join("omptarget/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let folder = relative.components().next().unwrap().as_os_str();
        let exporting = OMPTARGET_EXPORTING.iter().any(|f| folder == *f);
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim() != "#[no_mangle]" {
                continue;
            }
            let at = format!("omptarget/src/{}:{}", relative.display(), i + 1);
            if !exporting {
                wrong.push(format!("{at}: exported outside {OMPTARGET_EXPORTING:?}"));
            }
            // The first line of the body follows the signature's `{`.
            let body = lines[i..]
                .iter()
                .position(|l| l.trim_end().ends_with('{'))
                .and_then(|at| lines.get(i + at + 1));
            if !body.is_some_and(|l| l.trim_start().starts_with("boundary(")) {
                wrong.push(format!("{at}: the body does not begin with boundary("));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_path_finder_sees_paths_and_skips_longer_names() {
    let code = "use crate::plugin::Device; let x = my_crate::runtime::y; crate::image::read()";
    assert_eq!(
        named_paths(code, "crate::"),
        vec!["plugin::Device", "image::read"]
    );
}

/// The files of `folder` and which of their siblings each names (`super::<file>`;
/// `mod.rs` counted as `mod`, named by `super::<item>` where no sibling has that name).
fn sibling_imports(folder: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(folder, &mut files);
    let stem = |f: &Path| f.file_stem().unwrap().to_string_lossy().to_string();
    let siblings: BTreeSet<String> = files.iter().map(|f| stem(f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let code = code_of(file);
        assert!(
            !code.contains("super::{"),
            "{}: a grouped `super::{{...}}` import; name each file in its own `use`",
            file.display()
        );
        let named = named_paths(&code, "super::")
            .into_iter()
            .map(|path| {
                let first = path.split("::").next().unwrap_or("").to_string();
                if siblings.contains(&first) {
                    first
                } else {
                    "mod".to_string()
                }
            })
            .filter(|named| *named != stem(file))
            .collect();
        graph.insert(stem(file), named);
    }
    graph
}

#[test]
fn a_backends_kernel_does_not_name_its_stream() {
    // Launching is the stream's (and `plugin::launch_now`'s for a synchronous launch
    // without a direct path): a kernel that made a stream of its own to launch itself
    // tied the two files in a circle.
    for entry in std::fs::read_dir(root().join("src/plugins")).unwrap() {
        let folder = entry.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        let graph = sibling_imports(&folder);
        if let Some(named) = graph.get("kernel") {
            assert!(
                !named.contains("stream"),
                "{}: kernel.rs names stream.rs",
                folder.display()
            );
        }
    }
}
