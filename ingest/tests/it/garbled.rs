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
    replaced(text, line, number, &with)
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
        let Some(m) = p.measurements.iter().find(|m| {
            m.value.is_some()
                && (m.direction != Direction::None || formats::counters::is_counter(m))
        }) else {
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

/// Every format but Nsight Compute's, whose counter cells hold words (`PolicySpread`,
/// `No-CC`) kept as settings, never a refusal, and whose text that starts like a number
/// is kept the same way with a warning (`captures.rs` holds its own property).
fn strict_formats() -> Vec<Format> {
    Format::ALL
        .into_iter()
        .filter(|f| *f != Format::NcuCsv)
        .collect()
}

#[test]
fn a_value_that_is_not_a_number_refuses_the_file_in_every_format() {
    let (tried, wrong) = each_changed_file(&strict_formats(), |text, m, raw| {
        garbled(text, m.line as usize, raw)
    });
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every format with measured values was tried.
    let untried: Vec<&str> = strict_formats()
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

/// The number `n` as it may be garbled in print: a letter for a digit (`1O.9`), two
/// points (`1.2.34`), a letter after it (`12.5O`), a ratio's or a percentage's sign
/// after it (`12.5x`, `12.5%`), an exponent with no digits (`12.5e`). None for a form `n`
/// cannot take.
fn garbled_forms(n: &str) -> Vec<String> {
    let digits = n.bytes().filter(u8::is_ascii_digit).count();
    if digits < 2
        || !n
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        return Vec::new();
    }
    let at = n.find(|c: char| c.is_ascii_digit()).unwrap();
    let letter = format!("{}O{}", &n[..at + 1], &n[at + 2..]);
    let two_points = if n.contains('.') {
        format!("{}.{}", &n[..at + 1], &n[at + 1..])
    } else {
        format!(
            "{}.{}.{}",
            &n[..at + 1],
            &n[at + 1..n.len() - 1],
            &n[n.len() - 1..]
        )
    };
    // A ratio or a percentage where a measured value stands (`12.5x`, `12.5%`), and
    // an exponent cut short (`12.5e`).
    vec![
        letter,
        two_points,
        format!("{n}O"),
        format!("{n}x"),
        format!("{n}%"),
        format!("{n}e"),
    ]
}

/// `n` printed with thousands separators (`1234.5` -> `1,234.5`), when it has four
/// digits or more before its point.
fn with_thousands(n: &str) -> Option<String> {
    let (sign, rest) = n.strip_prefix('-').map_or(("", n), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    if int.len() < 4 || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    Some(match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    })
}

/// `text` with the number `number` on line `line` (or the first line after it that
/// prints it, whole) replaced by `with`.
fn replaced(text: &str, line: usize, number: &str, with: &str) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    for l in lines.iter_mut().skip(line.checked_sub(1)?) {
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

/// The property every reader holds, on every sample and real file it reads: its first
/// measured number garbled in print (a letter among the digits, two points, a letter
/// after it) refuses the file at a line; printed with thousands separators, it is read
/// as the number it denotes or refused at a line. Never stored as another number.
#[test]
fn a_garbled_number_is_read_as_what_it_denotes_or_refused_never_another_number() {
    let wrong = std::cell::RefCell::new(Vec::new());
    let forms_tried = std::cell::RefCell::new(BTreeMap::<&'static str, usize>::new());
    let (tried, refused_at_no_line) = each_changed_file(&strict_formats(), |text, m, raw| {
        let number = raw.split_whitespace().next()?;
        let cx = formats::Context {
            source: "garbled",
            unit: Some("ms"),
            variant_axis: None,
        };
        // Read as the format that read the file (the Triton CSV's folder forces it).
        let (f, _) = formats::parse_in(text, None, &cx)
            .or_else(|_| formats::parse_in(text, Some(Format::TritonCsv), &cx))
            .ok()?;
        for form in garbled_forms(number) {
            let Some(bad) = replaced(text, m.line as usize, number, &form) else {
                continue;
            };
            *forms_tried.borrow_mut().entry(f.name()).or_default() += 1;
            match formats::parse_in(&bad, Some(f), &cx) {
                Err(e) if e.line > 0 => {}
                Err(e) => wrong.borrow_mut().push(format!(
                    "{} (line {}): `{number}` printed `{form}` refused at no line: {e}",
                    f.name(),
                    m.line
                )),
                Ok((_, p)) => {
                    let same_row = p.measurements.iter().find(|x| {
                        x.line == m.line && x.variant == m.variant && x.metric == m.metric
                    });
                    wrong.borrow_mut().push(format!(
                        "{} (line {}): `{number}` printed `{form}` read (as {:?}), not refused",
                        f.name(),
                        m.line,
                        same_row.map(|x| x.value)
                    ));
                }
            }
        }
        // Thousands separators: the same number, or refused at a line. Not in JSON, where
        // a comma between digits is the syntax's (`[6,566.7]` is two numbers).
        if text.trim_start().starts_with(['{', '[']) {
            return None;
        }
        let thousands = with_thousands(number)?;
        let bad = replaced(text, m.line as usize, number, &thousands)?;
        if let Ok((f, p)) = formats::parse_in(&bad, Some(f), &cx) {
            let got = p
                .measurements
                .iter()
                .find(|x| x.line == m.line && x.variant == m.variant && x.metric == m.metric);
            if let Some(x) = got.filter(|x| x.value != m.value) {
                wrong.borrow_mut().push(format!(
                    "{} (line {}): `{thousands}` read as {:?}, not {:?}",
                    f.name(),
                    m.line,
                    x.value,
                    m.value
                ));
            }
        }
        None
    });
    let wrong = wrong.into_inner();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(refused_at_no_line.is_empty(), "{refused_at_no_line:?}");
    let _ = tried;
    let forms = forms_tried.into_inner();
    // Every reader with a measured number of two digits or more was tried.
    assert!(forms.len() >= 15, "{forms:?}");
}

#[test]
fn garbled_forms_of_a_number() {
    assert_eq!(
        garbled_forms("12.34"),
        ["1O.34", "1.2.34", "12.34O", "12.34x", "12.34%", "12.34e"]
    );
    assert_eq!(
        garbled_forms("1234"),
        ["1O34", "1.23.4", "1234O", "1234x", "1234%", "1234e"]
    );
    assert!(garbled_forms("7").is_empty());
    assert_eq!(with_thousands("1234.5").as_deref(), Some("1,234.5"));
    assert_eq!(with_thousands("-1234567").as_deref(), Some("-1,234,567"));
    assert_eq!(with_thousands("123.5"), None);
}
