//! A measured value that is not a number refuses the file, in every format, at its line:
//! never stored with the value dropped (compare would then call the row missing or
//! invalid, detect would see a gap). Each sample and real file perfdb reads, with one
//! measured value replaced by text, read again as the format that read it.

use perfdb_ingest::formats;
use perfdb_ingest::model::{Direction, Format, Measurement};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The file's text with the number of its first measured value replaced by `slow`
/// (quoted in JSON): the value's printed number (its text up to a space: a reader
/// keeps the unit it was printed in beside it), first found from the value's line on
/// (a JSON reader gives the record's line). None when it is not there as printed.
fn garbled(text: &str, line: usize, raw: &str) -> Option<String> {
    let number = raw.split_whitespace().next()?;
    let json = text.trim_start().starts_with(['{', '[']);
    // In text, as wide as the number where it is wider: a fixed-width table keeps its
    // columns.
    let with = if json {
        "\"slow\"".to_string()
    } else {
        format!("{:>w$}", "slow", w = number.len())
    };
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    for l in lines.iter_mut().skip(line.checked_sub(1)?) {
        // The number as printed, not a longer one that holds it.
        let found = l.match_indices(number).find(|(i, _)| {
            let before = l[..*i].chars().next_back();
            let after = l[i + number.len()..].chars().next();
            let part = |c: char| c.is_ascii_alphanumeric() || c == '.';
            !before.is_some_and(part) && !after.is_some_and(part)
        });
        if let Some((i, _)) = found {
            *l = format!("{}{with}{}", &l[..i], &l[i + number.len()..]);
            return Some(lines.join("\n"));
        }
    }
    None
}

/// Each sample and real file perfdb reads, its first measured value's line changed by
/// `change` (None: the file is skipped), read again as the format that read it. Returns
/// the files tried per format, and a line for each changed file that was still read
/// or refused at no line.
fn each_changed_file(
    formats_tried: &[Format],
    change: impl Fn(&str, &Measurement, &str) -> Option<String>,
) -> (BTreeMap<&'static str, usize>, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-data");
    let mut files = Vec::new();
    for d in [
        "formats",
        "derived",
        "realworld",
        "gpu-harness",
        "h200-gemm/ab",
    ] {
        files_under(&root.join(d), &mut files);
    }
    files.sort();
    let mut tried: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        // Triton's CSV prints no unit: read as the corpus reads it, with one.
        let cx = formats::Context {
            source: f.to_str().unwrap(),
            unit: Some("ms"),
            variant_axis: None,
        };
        let forced = f
            .parent()
            .is_some_and(|d| d.ends_with("triton-csv"))
            .then_some(Format::TritonCsv);
        let Ok((format, p)) = formats::parse_in(&text, forced, &cx) else {
            continue;
        };
        if !formats_tried.contains(&format) {
            continue;
        }
        let Some(m) = p
            .measurements
            .iter()
            .find(|m| m.value.is_some() && m.direction != Direction::None)
        else {
            continue;
        };
        let Some(bad) = change(&text, m, p.raw(m)) else {
            continue;
        };
        *tried.entry(format.name()).or_default() += 1;
        match formats::parse_in(&bad, Some(format), &cx) {
            Err(e) if e.line > 0 => {}
            Err(e) => wrong.push(format!(
                "{} ({}): refused at no line: {e}",
                f.display(),
                format.name()
            )),
            Ok(_) => wrong.push(format!(
                "{} ({}): line {} changed (`{}`), still read",
                f.display(),
                format.name(),
                m.line,
                p.raw(m).trim()
            )),
        }
    }
    (tried, wrong)
}

#[test]
fn a_value_that_is_not_a_number_refuses_the_file_in_every_format() {
    let (tried, wrong) = each_changed_file(&Format::ALL, |text, m, raw| {
        garbled(text, m.line as usize, raw)
    });
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every format with measured values was tried.
    let untried: Vec<&str> = Format::ALL
        .iter()
        .map(|f| f.name())
        .filter(|n| !tried.contains_key(n))
        .collect();
    assert!(
        untried.is_empty(),
        "no file tried for {untried:?}: {tried:?}"
    );
}

/// The file's text with the last cell of line `line` cut off (a row a cell short), for
/// the tables of text formats; None for JSON and lines that are no table row.
fn cut_short(text: &str, line: usize) -> Option<String> {
    if text.trim_start().starts_with(['{', '[']) {
        return None;
    }
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    let l = lines.get(line.checked_sub(1)?)?.trim_end().to_string();
    let cut = if l.ends_with('|') {
        let body = &l[..l.len() - 1];
        format!("{}|", &body[..body.rfind('|')?])
    } else if l.contains(',') {
        l[..l.rfind(',')?].to_string()
    } else {
        let t = l.trim_end();
        t[..t.rfind(char::is_whitespace)?].to_string()
    };
    lines[line - 1] = cut;
    Some(lines.join("\n"))
}

#[test]
fn a_row_a_cell_short_refuses_the_file_in_every_table_format() {
    // Formats of table rows (not `key=value` lines, whose last field is optional).
    // Not tritonbench: tabulate prints a missing value as an empty cell, so a
    // fixed-width row a cell short is a row whose last value is missing.
    let tables = [
        Format::AiterTable,
        Format::NvbenchMarkdown,
        Format::TritonPerfReport,
        Format::TorchCompare,
        Format::FlydslBench,
        Format::RocmBenchCsv,
        Format::TritonCsv,
        Format::AiterTunedCsv,
        Format::AortaMatrix,
    ];
    let (tried, wrong) = each_changed_file(&tables, |text, m, _| cut_short(text, m.line as usize));
    assert!(wrong.is_empty(), "{}\n{tried:?}", wrong.join("\n"));
    assert_eq!(tried.len(), tables.len(), "{tried:?}");
}
