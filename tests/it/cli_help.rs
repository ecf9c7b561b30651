//! What `--help` says (snapshots) and the README's formats table against `perfdb formats`.

use crate::common::*;

#[test]
fn help_texts() {
    let wh = Wh::new();
    let help = |args: &[&str]| {
        let out = wh
            .cmd()
            .env_remove("PERFDB_WAREHOUSE")
            // clap wraps help to $COLUMNS when output is not a terminal.
            .env("COLUMNS", "100")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        stdout(&out)
    };
    insta::assert_snapshot!("help", help(&["--help"]));
    insta::assert_snapshot!("help_ingest", help(&["ingest", "--help"]));
    insta::assert_snapshot!("help_compare", help(&["compare", "--help"]));
    insta::assert_snapshot!("help_export_site", help(&["export-site", "--help"]));
    insta::assert_snapshot!("help_export", help(&["export", "--help"]));
    insta::assert_snapshot!("help_run", help(&["run", "--help"]));
    insta::assert_snapshot!("help_ab", help(&["ab", "--help"]));
    insta::assert_snapshot!("help_bisect", help(&["bisect", "--help"]));
    insta::assert_snapshot!("help_noise", help(&["noise", "--help"]));
    insta::assert_snapshot!(
        "help_devices_measure",
        help(&["devices", "measure", "--help"])
    );
    insta::assert_snapshot!("formats", help(&["formats"]));
}

/// The README's format table holds, for every format, the line `perfdb formats` prints.
#[test]
fn the_readme_lists_every_format_as_perfdb_formats_does() {
    let wh = Wh::new();
    let out = wh.run(&["formats"]);
    assert!(out.status.success());
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let listed: Vec<String> = stdout(&out)
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let (name, summary) = l.split_once("  ").unwrap();
            format!("| `{name}` | {} |", summary.trim())
        })
        .collect();
    assert_eq!(listed.len(), perfdb_ingest::formats::Format::ALL.len());
    for row in &listed {
        assert!(readme.contains(row.as_str()), "README lacks the row\n{row}");
    }
}
