//! docs/architecture.md follows the code: every path its map names exists, and every
//! top-level folder of each crate's sources is in the map.

use std::path::{Path, PathBuf};

/// Where the descriptions start: a line indented this far continues one.
const NAMES: usize = 31;

/// Each path the map names (its tree read by indentation: two spaces a level), with the
/// map's line.
fn named_paths(doc: &str) -> Vec<(usize, PathBuf)> {
    let block = doc.split("```").nth(1).expect("the map's code block");
    let first_line = doc[..doc.find("```").unwrap()].lines().count() + 1;
    let mut stack: Vec<(usize, PathBuf)> = Vec::new();
    let mut out = Vec::new();
    for (i, line) in block.lines().enumerate() {
        let content = line.trim_start();
        let spaces = line.len() - content.len();
        if content.is_empty() || spaces >= NAMES {
            continue; // a description's continuation
        }
        // The names, then two spaces or more, then the description.
        let names = content.split("  ").next().unwrap_or("");
        let indent = spaces / 2;
        stack.truncate(indent);
        let parent = stack.last().map(|(_, p)| p.clone()).unwrap_or_default();
        let mut last = None;
        for name in names.split_whitespace() {
            let path = parent.join(name.trim_end_matches('/'));
            out.push((first_line + i, path.clone()));
            if name.ends_with('/') {
                last = Some(path);
            }
        }
        if let Some(dir) = last {
            stack.push((indent, dir));
        }
    }
    out
}

#[test]
fn the_architecture_map_names_what_exists_and_every_crate_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named = named_paths(&doc);
    assert!(named.len() > 50, "the map was not read: {named:?}");
    let missing: Vec<String> = named
        .iter()
        .filter(|(_, p)| !root.join(p).exists())
        .map(|(line, p)| {
            format!(
                "docs/architecture.md:{line}: {} does not exist",
                p.display()
            )
        })
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let mut omitted = Vec::new();
    for src in ["src", "ingest/src", "reports/src", "web/src"] {
        for e in std::fs::read_dir(root.join(src)).unwrap().flatten() {
            let path = Path::new(src).join(e.file_name());
            if e.path().is_dir() && !named.iter().any(|(_, p)| *p == path) {
                omitted.push(format!(
                    "{}/ is not in docs/architecture.md's map",
                    path.display()
                ));
            }
        }
    }
    assert!(omitted.is_empty(), "{}", omitted.join("\n"));
}

#[test]
fn the_map_is_read_by_indentation() {
    let doc = "x\n```\nsrc/                           the binary\n  cli/                         flags\n    a.rs b.rs                  two\n                               more words\n  main.rs                      exit\n```\n";
    let named: Vec<String> = named_paths(doc)
        .into_iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    assert_eq!(
        named,
        [
            "src",
            "src/cli",
            "src/cli/a.rs",
            "src/cli/b.rs",
            "src/main.rs"
        ]
    );
}

/// Every module of the binary and the library crates is named in docs/architecture.md
/// (its file's name as a word), but a format's own files: `perfdb formats` lists those,
/// and the map says where they live.
#[test]
fn the_architecture_map_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named = |stem: &str| {
        doc.match_indices(stem).any(|(i, _)| {
            let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            !word(doc[..i].chars().next_back()) && !word(doc[i + stem.len()..].chars().next())
        })
    };
    let mut omitted = Vec::new();
    let mut files = Vec::new();
    for src in ["src", "ingest/src", "reports/src", "web/src"] {
        let mut stack = vec![root.join(src)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
    }
    for p in &files {
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let formats = root.join("ingest/src/formats");
        let a_format = p.starts_with(&formats)
            && !p.starts_with(formats.join("support"))
            && !["mod", "parser", "checks"].contains(&stem.as_str());
        let test_only = stem == "tests" || stem.ends_with("_tests") || rel.contains("/tests/");
        if a_format || test_only || ["mod", "lib", "main"].contains(&stem.as_str()) {
            continue;
        }
        if !named(&stem) {
            omitted.push(rel);
        }
    }
    assert!(
        files.len() > 150,
        "the sources were not read: {}",
        files.len()
    );
    omitted.sort();
    assert!(
        omitted.is_empty(),
        "docs/architecture.md names no module {}: say what each does in the map",
        omitted.join(", ")
    );
}

/// `scripts/check-structure` run over a tree planted with two breaches it must refuse:
/// one format importing another, and a function of 130 lines after a declared test
/// module (`#[cfg(test)] mod tests;`, whose code lives in another file).
#[test]
fn the_structure_check_refuses_planted_breaches() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = tempfile::tempdir().unwrap();
    let put = |rel: &str, text: &str| {
        let p = tree.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let check = || {
        std::process::Command::new("python3")
            .arg(root.join("scripts/check-structure"))
            .arg("--root")
            .arg(tree.path())
            .output()
            .expect("python3 runs the structure check")
    };
    put("ingest/src/lib.rs", "pub mod formats;\n");
    put(
        "ingest/src/formats/mod.rs",
        "pub mod a;\npub mod b;\npub mod support;\n",
    );
    put("ingest/src/formats/support/mod.rs", "pub fn shared() {}\n");
    put(
        "ingest/src/formats/a.rs",
        "use crate::formats::support::shared;\n",
    );
    put("ingest/src/formats/b.rs", "pub fn f() {}\n");
    put("reports/src/lib.rs", "pub mod bisect;\n");
    let body: String = (0..128)
        .map(|i| format!("    let _x{i} = {i};\n"))
        .collect();
    let clean = format!("pub fn run() {{\n{body}}}\n").replace(&body[..body.len() / 2], "");
    put("reports/src/bisect/mod.rs", &clean);
    let out = check();
    assert!(
        out.status.success(),
        "a clean tree passes: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    put("ingest/src/formats/a.rs", "use crate::formats::b::f;\n");
    put(
        "reports/src/bisect/mod.rs",
        &format!("#[cfg(test)]\nmod tests;\n\npub fn run() {{\n{body}}}\n"),
    );
    let out = check();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "ingest/src/formats/a.rs:1: a format imports another format (ingest/src/formats/b.rs)"
        ),
        "{said}"
    );
    assert!(
        said.contains("reports/src/bisect/mod.rs:4: fn run is 130 lines (at most 120)"),
        "{said}"
    );
}
