//! Meta's tritonbench (`python run.py --op NAME --metrics latency,gbps,...`), in the
//! three forms it writes:
//! - the printed table (tabulate's `simple` layout: a header, a rule of dashes per
//!   column, the rows; cells hold spaces, so columns are cut where the rule's dashes
//!   are),
//! - `--output FILE` (the same table as a `;`-separated CSV),
//! - `--output-json FILE` (one object: `tritonbench_<op>_<mode>[x_<x_val>-<backend>]_
//!   <metric>` -> value, and `tritonbench_<op>_<mode>[<backend>]-<metric>-avg`).
//!
//! Columns are `<backend>-<metric>`: the backend is the variant, the metric says the
//! quantity. `latency` is in ms (tritonbench's p50 after outlier removal: the run's
//! method `tritonbench:p50`); a printed `(±24.48%)` is its spread, kept as
//! `latency_spread` and never part of the value. `gbps` is a tuple (at the p50, the
//! fastest and the slowest time): the first element is the bandwidth. `tflops` is
//! compared; `speedup` and `accuracy` (against the baseline backend) are derived;
//! metrics perfdb cannot classify are kept `unclassified`, text ones as notes.
//!
//! The key is `x_val`, split into the header's names when both are tuples (`(M, N, K)`
//! over `(1024, 12800, 1152)`). The `average` row and the `-avg` fields (key `x_val=average`) are derived:
//! kept, never compared. A `-pass` field of 0 marks the run failed. The table is the
//! operator where the output names it (the JSON's fields), else the file's name: the
//! printed table and the CSV do not name their operator. tritonbench's A/B mode
//! (`--side-a`/`--side-b`) prints two configurations in one output and is refused:
//! each side is a run of its own.

use crate::formats::parser::{Context, ParseError, Parser};
use crate::formats::support::emit::{key_number, Row, Spec};
use crate::formats::support::json::{self, Fields};
use crate::formats::support::text::{has, parse_value};
use crate::model::Format;
use crate::model::{metric, Parsed, RunVerdict, Warning};

pub struct Tritonbench;

/// A printed `<backend>-<metric>` name's metrics this parser knows.
fn spec_of(metric_name: &str, column: &str, average: bool) -> Spec {
    let spec = match metric_name {
        "latency" => Spec::measured(None, "ms", column),
        "gbps" => Spec::measured(None, "GB/s", column),
        "tflops" => Spec::measured(None, "TFLOPS", column),
        "speedup" => Spec::derived(metric::SPEEDUP, "x", column, None),
        "accuracy" => Spec::derived("accuracy", "", column, None),
        // tritonbench's own time metrics, all in ms: kept beside the latency.
        "walltime" | "kernel_walltime" | "cuda_time" | "compile_time" | "cpu_time" => {
            Spec::measured(Some(metric_name), "ms", column).kept()
        }
        "gpu_peak_mem" | "cpu_peak_mem" => Spec::derived(metric_name, "GB", column, None),
        _ => Spec::derived(
            metric::UNCLASSIFIED,
            "",
            column,
            Some("unclassified tritonbench metric"),
        ),
    };
    if average {
        spec.kept()
    } else {
        spec
    }
}

impl Parser for Tritonbench {
    fn format(&self) -> Format {
        Format::Tritonbench
    }
    fn sniff(&self, text: &str) -> bool {
        let start = text.trim_start();
        if start.starts_with('{') {
            return has(text, "\"tritonbench_");
        }
        let first = start.lines().next().unwrap_or("");
        if first.contains(';') {
            return is_header(&first.split(';').map(str::trim).collect::<Vec<_>>());
        }
        // The x column is `x_val`, or the op's input names (`(Batch, Heads, SeqLen,
        // Dhead)`) over `<backend>-<metric>` columns.
        let marked = has(text, "x_val")
            || ["-tflops", "-latency", "-gbps", "-speedup"]
                .iter()
                .any(|m| has(text, m));
        marked && table_at(text).is_some()
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 30);
        let stem = file_stem(cx.source);
        let start = text.trim_start();
        if start.starts_with('{') {
            read_json(text, &mut parsed)?;
        } else if start.lines().next().is_some_and(|l| l.contains(';')) {
            read_csv(text, stem, &mut parsed)?;
        } else {
            read_printed(text, stem, &mut parsed)?;
        }
        parsed.provenance.tags.push((
            crate::model::METHOD_TAG.to_string(),
            "tritonbench:p50".to_string(),
        ));
        Ok(parsed)
    }
}

/// `runs/vector_add.log` -> `vector_add`; the table when the output names no operator.
fn file_stem(source: &str) -> &str {
    let name = source.rsplit(['/', '\\']).next().unwrap_or(source);
    let stem = name.split_once('.').map_or(name, |(s, _)| s);
    if stem.is_empty() {
        "tritonbench"
    } else {
        stem
    }
}

/// A header of tritonbench's table: `x_val` (or a label tuple `(M, N, K)`) first, then
/// `<backend>-<metric>` columns.
fn is_header(cells: &[&str]) -> bool {
    let first_ok = cells
        .first()
        .is_some_and(|c| *c == "x_val" || (c.starts_with('(') && c.ends_with(')')));
    first_ok && cells.len() > 1 && cells[1..].iter().all(|c| c.rsplit_once('-').is_some())
}

/// The column extents (char ranges) of tabulate's rule line `-----  ------`, when `line`
/// is one.
fn rule_spans(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    if t.is_empty() || !t.chars().all(|c| c == '-' || c == ' ') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in t.chars().enumerate() {
        match (c, start) {
            ('-', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, t.chars().count()));
    }
    (spans.len() >= 2).then_some(spans)
}

/// `line`'s text in each of `spans` (by chars: `±` is one column), trimmed.
fn cut(line: &str, spans: &[(usize, usize)]) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    spans
        .iter()
        .enumerate()
        .map(|(i, &(s, e))| {
            // The last column runs to the end of the line.
            let e = if i + 1 == spans.len() { chars.len() } else { e };
            chars
                .get(s.min(chars.len())..e.min(chars.len()))
                .map(|c| c.iter().collect::<String>().trim().to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// Whether `line` is blank between the rule's columns, as tabulate's rows are.
fn fits(line: &str, spans: &[(usize, usize)]) -> bool {
    let gaps: Vec<(usize, usize)> = spans.windows(2).map(|w| (w[0].1, w[1].0)).collect();
    line.chars()
        .enumerate()
        .all(|(i, c)| c == ' ' || !gaps.iter().any(|&(s, e)| (s..e).contains(&i)))
}

/// The 0-based line of the first printed table's header.
fn table_at(text: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    tables(&lines).into_iter().next()
}

/// Every printed table's header line (0-based).
fn tables(lines: &[&str]) -> Vec<usize> {
    (0..lines.len().saturating_sub(1))
        .filter(|&i| {
            rule_spans(lines[i + 1]).is_some_and(|spans| {
                let head = cut(lines[i], &spans);
                is_header(&head.iter().map(String::as_str).collect::<Vec<_>>())
            })
        })
        .collect()
}

/// The key of an `x_val` cell under header `head`.
fn key_of(head: &str, cell: &str) -> Vec<(String, String)> {
    let inner = |s: &str| -> Option<Vec<String>> {
        let s = s.trim().strip_prefix('(')?.strip_suffix(')')?;
        Some(
            s.split(',')
                .map(|p| p.trim().trim_matches(['\'', '"']).to_string())
                .filter(|p| !p.is_empty())
                .collect(),
        )
    };
    if let (Some(names), Some(values)) = (inner(head), inner(cell)) {
        if names.len() == values.len() {
            return names
                .into_iter()
                .zip(values)
                .map(|(n, v)| (n, key_number(&v).to_string()))
                .collect();
        }
    }
    vec![(head.to_string(), key_number(cell).to_string())]
}

/// One `<backend>-<metric>` cell of a row.
struct Cell<'a> {
    table: &'a str,
    key: &'a [(String, String)],
    average: bool,
    column: &'a str,
    text: &'a str,
    line: usize,
}

/// Store one cell: its value (the first of a tuple; the spread beside a latency).
fn put(parsed: &mut Parsed, c: Cell) -> Result<(), ParseError> {
    let text = c.text.trim();
    if text.is_empty() {
        return Ok(());
    }
    let Some((backend, name)) = c.column.rsplit_once('-') else {
        return Ok(());
    };
    let row = Row::new(&mut parsed.keys, c.table, backend, c.key, c.line);
    let spec = spec_of(name, c.column, c.average);
    // `(10.74, 9.14, 14.22)` / `[10.74, ...]`: the first element.
    let (number, spread) = if let Some(inner) = text
        .strip_prefix(['(', '['])
        .and_then(|t| t.strip_suffix([')', ']']))
    {
        (inner.split(',').next().unwrap_or("").trim(), None)
    } else if let Some((v, rest)) = text.split_once(" (±") {
        (v.trim(), rest.strip_suffix("%)"))
    } else {
        (text, None)
    };
    match crate::formats::support::text::parse_in(number, spec.metric.as_ref()) {
        Ok(value) => {
            parsed
                .measurements
                .push(row.put(&mut parsed.keys, &spec, value, text));
        }
        // A text metric (a config, a kernel name): a note.
        Err(_) if spec.metric.as_ref() == metric::UNCLASSIFIED => {
            let note = Spec::derived(metric::NOTE, "", c.column, None);
            parsed
                .measurements
                .push(row.put(&mut parsed.keys, &note, None, text));
        }
        Err(_) => {
            return Err(ParseError::at(
                c.line,
                format!("{}: '{text}' is not a number", c.column),
            ))
        }
    }
    if let Some(s) = spread {
        let v = parse_value(s).map_err(|_| {
            ParseError::at(
                c.line,
                format!("{}: spread '(±{s}%)' is not a number", c.column),
            )
        })?;
        let spec = Spec::derived(&format!("{name}_spread"), "fraction", c.column, None);
        parsed
            .measurements
            .push(row.put(&mut parsed.keys, &spec, v.map(|v| v / 100.0), text));
    }
    Ok(())
}

/// The printed table.
fn read_printed(text: &str, stem: &str, parsed: &mut Parsed) -> Result<(), ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let found = tables(&lines);
    let Some(&at) = found.first() else {
        return Err(ParseError::at(
            0,
            "no tritonbench table (an `x_val` header over a rule of dashes)",
        ));
    };
    if let Some(b) = lines.iter().position(|l| l.contains("Running Side B")) {
        return Err(ParseError::at(
            b + 1,
            "tritonbench's A/B mode prints two configurations in one output: perfdb keeps \
             each as a run of its own (write each side with --output and ingest the files \
             under two labels)",
        ));
    }
    if found.len() > 1 {
        return Err(ParseError::at(
            found[1] + 1,
            "a second tritonbench table: ingest each operator's output as a file of its own",
        ));
    }
    let table = lines[..at]
        .iter()
        .rev()
        .find_map(|l| l.trim().strip_prefix("Operator: "))
        .unwrap_or(stem)
        .to_string();
    let spans = rule_spans(lines[at + 1]).unwrap_or_default();
    let head = cut(lines[at], &spans);
    for (i, line) in lines.iter().enumerate().skip(at + 2) {
        if line.trim().is_empty() || rule_spans(line).is_some() {
            break;
        }
        // A line with text between the rule's columns is no row: the table ended (a
        // log line follows it).
        if !fits(line, &spans) {
            break;
        }
        let cells = cut(line, &spans);
        if cells[0].is_empty() {
            break;
        }
        read_row(parsed, &table, &head, &cells, i + 1)?;
    }
    if parsed.measurements.is_empty() {
        return Err(ParseError::at(
            at + 3,
            "the table's first row does not line up under its header's rule (no row read)",
        ));
    }
    Ok(())
}

/// One row of the printed table or the CSV.
fn read_row(
    parsed: &mut Parsed,
    table: &str,
    head: &[String],
    cells: &[String],
    line: usize,
) -> Result<(), ParseError> {
    let x = cells[0].as_str();
    let average = x == "average" || x == "x_average";
    let key = if average {
        vec![("x_val".to_string(), "average".to_string())]
    } else {
        key_of(&head[0], x)
    };
    for (column, cell) in head.iter().zip(cells).skip(1) {
        put(
            parsed,
            Cell {
                table,
                key: &key,
                average,
                column,
                text: cell,
                line,
            },
        )?;
    }
    Ok(())
}

/// `--output`'s `;`-separated CSV.
fn read_csv(text: &str, stem: &str, parsed: &mut Parsed) -> Result<(), ParseError> {
    let mut lines = text.lines().enumerate();
    let head: Vec<String> = lines
        .next()
        .map(|(_, l)| l.split(';').map(|c| c.trim().to_string()).collect())
        .unwrap_or_default();
    if !is_header(&head.iter().map(String::as_str).collect::<Vec<_>>()) {
        return Err(ParseError::at(
            1,
            "not a tritonbench CSV: the header is not `x_val;<backend>-<metric>;...`",
        ));
    }
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<String> = line.split(';').map(|c| c.trim().to_string()).collect();
        if cells.len() != head.len() {
            return Err(ParseError::at(
                i + 1,
                format!(
                    "{} cells under a header of {} (tritonbench separates with ';')",
                    cells.len(),
                    head.len()
                ),
            ));
        }
        read_row(parsed, stem, &head, &cells, i + 1)?;
    }
    Ok(())
}

/// `--output-json`'s object.
fn read_json(text: &str, parsed: &mut Parsed) -> Result<(), ParseError> {
    let fields: Fields = serde_json::from_str(text)
        .map_err(|e| ParseError::at(e.line(), format!("not a tritonbench JSON: {e}")))?;
    let lines = crate::formats::support::emit::lines_of(text, "\"tritonbench_");
    let mut n = 0;
    let mut modes: Vec<String> = Vec::new();
    for (name, raw) in &fields.0 {
        let Some(rest) = name.0.strip_prefix("tritonbench_") else {
            continue;
        };
        let line = lines.get(n).copied().unwrap_or(1);
        n += 1;
        // `vector_add_fwd[x_4096-torch_add]_latency`, `vector_add_fwd[triton_add]-speedup-avg`,
        // `vector_add_fwd-pass`.
        let Some((op_mode, inner_rest)) = rest.split_once('[') else {
            if let Some(op_mode) = rest.strip_suffix("-pass") {
                if json::number(raw) == Ok(Some(0.0)) {
                    let (op, _) = split_mode(op_mode);
                    parsed.provenance.verdict = Some(RunVerdict::Fail);
                    parsed.provenance.verdict_detail =
                        Some(format!("tritonbench: {op} did not pass"));
                }
            }
            continue;
        };
        let (op, mode) = split_mode(op_mode);
        if !modes.iter().any(|m| m == mode) {
            modes.push(mode.to_string());
        }
        let Some((inside, tail)) = inner_rest.split_once(']') else {
            return Err(ParseError::at(line, format!("{}: no closing ']'", name.0)));
        };
        let (x, backend, metric_name, average) = if let Some(m) = tail.strip_prefix('_') {
            // `x_4096-torch_add`
            let Some((x, backend)) = inside.rsplit_once('-') else {
                return Err(ParseError::at(
                    line,
                    format!("{}: no `x_<x_val>-<backend>` in the brackets", name.0),
                ));
            };
            let x = x.strip_prefix("x_").unwrap_or(x);
            (x, backend, m, x == "average")
        } else if let Some(m) = tail.strip_prefix('-').and_then(|t| t.strip_suffix("-avg")) {
            ("average", inside, m, true)
        } else {
            continue;
        };
        let key = if average {
            vec![("x_val".to_string(), "average".to_string())]
        } else {
            key_of("x_val", x)
        };
        let table = if modes.len() > 1 || mode != "fwd" {
            format!("{op}_{mode}")
        } else {
            op.to_string()
        };
        let value_text = match json::scalar(raw) {
            json::Scalar::String(s) => s.into_owned(),
            json::Scalar::Null => continue,
            _ => raw.split_whitespace().collect::<Vec<_>>().join(" "),
        };
        let column = format!("{backend}-{metric_name}");
        put(
            parsed,
            Cell {
                table: &table,
                key: &key,
                average,
                column: &column,
                text: &value_text,
                line,
            },
        )?;
    }
    if fields
        .0
        .iter()
        .all(|(k, _)| !k.0.starts_with("tritonbench_"))
    {
        return Err(ParseError::at(1, "no `tritonbench_...` fields"));
    }
    if modes.len() > 1 {
        parsed.warnings.push(Warning {
            line: 0,
            reason: format!(
                "several modes in one file ({}): a table each",
                modes.join(", ")
            ),
        });
    }
    Ok(())
}

/// `vector_add_fwd` -> (`vector_add`, `fwd`).
fn split_mode(op_mode: &str) -> (&str, &str) {
    for mode in ["fwd_bwd", "fwd_no_grad", "fwd", "bwd"] {
        if let Some(op) = op_mode.strip_suffix(mode).and_then(|o| o.strip_suffix('_')) {
            return (op, mode);
        }
    }
    (op_mode, "fwd")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_cut_cells_that_hold_spaces() {
        let rule = "---------  -------------------  -----";
        let spans = rule_spans(rule).unwrap();
        assert_eq!(spans, [(0, 9), (11, 30), (32, 37)]);
        let row = "     4096   0.004576 (±24.48%)      1";
        assert_eq!(cut(row, &spans), ["4096", "0.004576 (±24.48%)", "1"]);
        assert!(rule_spans("-----").is_none());
        assert!(rule_spans("--- x ---").is_none());
    }

    #[test]
    fn tuple_keys_split_by_their_label() {
        assert_eq!(
            key_of("(M, N, K)", "(1024, 12800, 1152)"),
            [
                ("M".to_string(), "1024".to_string()),
                ("N".to_string(), "12800".to_string()),
                ("K".to_string(), "1152".to_string())
            ]
        );
        assert_eq!(key_of("x_val", "4096"), [("x_val".into(), "4096".into())]);
        assert_eq!(split_mode("vector_add_fwd"), ("vector_add", "fwd"));
        assert_eq!(
            split_mode("flash_attention_fwd_bwd"),
            ("flash_attention", "fwd_bwd")
        );
        assert_eq!(file_stem("out/tb_vector_add.csv"), "tb_vector_add");
    }

    #[test]
    fn a_failed_operator_fails_the_run_and_null_is_no_value() {
        let text = r#"{
    "tritonbench_gemm_fwd[x_(256, 256, 256)-triton_tutorial_matmul]_latency": null,
    "tritonbench_gemm_fwd[x_(256, 256, 256)-aten_matmul]_tflops": 12.5,
    "tritonbench_gemm_fwd-pass": 0
}"#;
        let p = Tritonbench.parse(text).unwrap();
        assert_eq!(p.provenance.verdict, Some(RunVerdict::Fail));
        assert_eq!(p.measurements.len(), 1);
        let m = &p.measurements[0];
        assert_eq!(
            (&*m.table, &*m.variant, &*m.metric),
            ("gemm", "aten_matmul", "throughput")
        );
        assert_eq!(m.line, 3);
        assert_eq!(p.keys.get(m.key), r#"{"x_val":"(256, 256, 256)"}"#);
    }
}
