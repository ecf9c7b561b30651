//! The CSV outputs: Triton's `save_path` CSV, the ROCm library benches
//! (hipBLASLt-bench, hipblas-bench, rocblas-bench) and aiter's tuned-config CSVs.
//!
//! - **Triton** `perf_report(..., save_path=DIR)` writes `DIR/<plot_name>.csv` with
//!   `df.to_csv(float_format="%.6f", index=False)`: the `x_names` columns, then one column
//!   per line, every number with six decimals, NaN as an empty cell. The file name is the
//!   table. The CSV carries no ylabel, so its unit comes from `--unit` (else the values
//!   are kept `unclassified`: stored, never compared), and nothing marks where the x
//!   columns end: they are the leading columns whose every value is integral
//!   (`512.000000`; Triton's x values are sizes), the rest are lines.
//! - **ROCm benches** print a header with a `<tool>-Gflops` column (`hipblaslt-Gflops`,
//!   `rocblas-Gflops`, `hipblas-Gflops`), hipBLASLt prefixed by `[0]:`, and one line of
//!   values under it, anywhere in a log (one header and line per problem). The tool is
//!   the variant, the table `gemm`; `*-Gflops`, `*-GB/s` and `us` are metrics, error
//!   columns derived, every other column is the problem (the key).
//! - **aiter tuned CSVs** (`gfx,cu_num,M,N,K,q_dtype_w,kernelId,splitK,us,kernelName,
//!   tflops,bw,errRatio`): the file name is the table, the variant `tuned`; `us`, `tflops`
//!   and `bw` (TB/s) are metrics, `errRatio` derived (`error_ratio`), the chosen kernel (`kernelId`,
//!   `splitK`, `kernelName`) kept as notes, the rest the key — a retune that picks another
//!   kernel for a shape is still the same row.

use super::emit::{key_number, Row};
use super::{lines, Context, Format, ParseError, Parser};
use crate::model::{metric, Parsed, Warning};
use crate::text::parse_value;

/// Split one CSV record; `"..."` cells may hold commas and `""`.
fn cells(line: &str) -> Vec<String> {
    if !line.contains('"') {
        return line.split(',').map(|c| c.trim().to_string()).collect();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// The table a file-named format takes from its source: `dir/matmul-fp16.csv` ->
/// `matmul-fp16`.
fn file_table<'a>(cx: &Context<'a>, default: &'a str) -> &'a str {
    std::path::Path::new(cx.source)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(default)
}

/// A number Triton's `%.6f` wrote: digits, a point, exactly six decimals.
fn six_decimals(cell: &str) -> bool {
    let c = cell.strip_prefix('-').unwrap_or(cell);
    match c.split_once('.') {
        Some((int, frac)) => {
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && frac.len() == 6
                && frac.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

pub struct TritonCsv;

impl Parser for TritonCsv {
    fn format(&self) -> Format {
        Format::TritonCsv
    }
    fn sniff(&self, text: &str) -> bool {
        let mut ls = text.lines().filter(|l| !l.trim().is_empty());
        let Some(header) = ls.next() else {
            return false;
        };
        let names = cells(header);
        if names.len() < 2 || names.iter().any(|n| n.is_empty() || parse_value(n).is_ok()) {
            return false;
        }
        // The first 50 rows all `%.6f` numbers or empty cells, and at least one with as
        // many cells as the header (a short row is the parser's to report).
        let mut rows = 0;
        for l in ls.take(50) {
            let c = cells(l);
            if !c.iter().all(|c| c.is_empty() || six_decimals(c)) {
                return false;
            }
            rows += usize::from(c.len() == names.len());
        }
        rows > 0
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let mut records = lines(text).filter(|(_, l)| !l.trim().is_empty());
        let (header_no, header) = records
            .next()
            .ok_or_else(|| ParseError::at(0, "empty CSV: no header"))?;
        let names = cells(&header);
        let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
        for (no, l) in records {
            let c = cells(&l);
            if c.len() != names.len() {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", c.len(), names.len()),
                ));
            }
            if let Some(bad) = c.iter().find(|c| parse_value(c).is_err()) {
                return Err(ParseError::at(no, format!("`{bad}` is not a number")));
            }
            rows.push((no, c));
        }
        if rows.is_empty() {
            return Err(ParseError::at(header_no, "a header and no rows"));
        }
        // The x columns: leading columns whose every value is integral.
        let integral = |c: usize| {
            rows.iter().all(|(_, r)| {
                parse_value(&r[c])
                    .ok()
                    .flatten()
                    .is_some_and(|v| v.fract() == 0.0)
            })
        };
        let n_x = (0..names.len() - 1)
            .take_while(|&c| integral(c))
            .count()
            .max(1);
        let table = file_table(cx, "triton");
        let mut parsed = Parsed::default();
        if cx.unit.is_none() {
            parsed.warnings.push(Warning {
                line: 0,
                reason: "a Triton CSV has no ylabel: values kept unclassified (not compared); \
                         give --unit (e.g. --unit TFLOPS) to measure them"
                    .to_string(),
            });
        }
        for (no, r) in &rows {
            let key: Vec<(String, String)> = (0..n_x)
                .map(|c| (names[c].clone(), key_number(&r[c]).to_string()))
                .collect();
            for c in n_x..names.len() {
                let row = Row::new(table, &names[c], &key, *no);
                let value = parse_value(&r[c]).ok().flatten();
                parsed.measurements.push(match cx.unit {
                    Some(unit) => row.value(None, unit, value, &r[c], &names[c]),
                    None => row.derived(
                        metric::UNCLASSIFIED,
                        "",
                        value,
                        &r[c],
                        &names[c],
                        Some("no ylabel in the CSV; give --unit"),
                    ),
                });
            }
        }
        Ok(parsed)
    }
}

/// A ROCm bench header: `[0]:transA,...,hipblaslt-Gflops,...,us` -> its cells.
fn rocm_header(line: &str) -> Option<Vec<String>> {
    let l = line.trim();
    let l = match l.strip_prefix('[') {
        Some(rest) => rest.split_once("]:").map(|(_, h)| h)?,
        None => l,
    };
    let names = cells(l);
    (names.len() >= 3
        && names
            .iter()
            .any(|n| n.to_ascii_lowercase().ends_with("-gflops")))
    .then_some(names)
}

pub struct RocmBenchCsv;

impl Parser for RocmBenchCsv {
    fn format(&self) -> Format {
        Format::RocmBenchCsv
    }
    fn sniff(&self, text: &str) -> bool {
        crate::finder!("-Gflops,").find(text.as_bytes()).is_some()
            && text.lines().any(|l| rocm_header(l).is_some())
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let all: Vec<(usize, String)> = lines(text).map(|(n, l)| (n, l.into_owned())).collect();
        let mut parsed = Parsed::default();
        let mut i = 0;
        while i < all.len() {
            let Some(names) = rocm_header(&all[i].1) else {
                i += 1;
                continue;
            };
            let tool = names
                .iter()
                .find_map(|n| {
                    let lower = n.to_ascii_lowercase();
                    lower
                        .strip_suffix("-gflops")
                        .map(|t| n[..t.len()].to_string())
                })
                .unwrap_or_default();
            // The value lines: every following line with as many cells.
            let mut j = i + 1;
            while j < all.len() && cells(&all[j].1).len() == names.len() {
                let (no, line) = &all[j];
                let c = cells(line);
                rocm_row(&tool, &names, &c, *no, &mut parsed)?;
                j += 1;
            }
            if j == i + 1 {
                parsed.warnings.push(Warning {
                    line: all[i].0,
                    reason: "a bench header with no line of values under it (skipped)".into(),
                });
            }
            i = j;
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(
                0,
                "no ROCm bench CSV: no `...,<tool>-Gflops,...,us` header with a line of values",
            ));
        }
        Ok(parsed)
    }
}

/// What a ROCm bench column holds.
enum RocmColumn<'a> {
    /// A metric in a unit (`Gflops`, `GB/s`, `us`).
    Metric(&'a str),
    /// An error or check column: derived.
    Derived,
    /// Part of the problem.
    Key,
}

fn rocm_column(name: &str) -> RocmColumn<'_> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, unit)) = name.rsplit_once('-') {
        if crate::units::unit_of_any_case(unit).is_some() {
            return RocmColumn::Metric(unit);
        }
    }
    if lower == "us" || lower == "ms" {
        return RocmColumn::Metric(name);
    }
    if lower.contains("error") || lower.contains("norm") || lower == "atol" || lower == "rtol" {
        return RocmColumn::Derived;
    }
    RocmColumn::Key
}

fn rocm_row(
    tool: &str,
    names: &[String],
    c: &[String],
    no: usize,
    parsed: &mut Parsed,
) -> Result<(), ParseError> {
    let key: Vec<(String, String)> = names
        .iter()
        .zip(c)
        .filter(|(n, _)| matches!(rocm_column(n), RocmColumn::Key))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let row = Row::new("gemm", tool, &key, no);
    for (n, v) in names.iter().zip(c) {
        let value = || {
            parse_value(v)
                .map_err(|_| ParseError::at(no, format!("`{v}` under `{n}` is not a number")))
        };
        match rocm_column(n) {
            RocmColumn::Metric(unit) => {
                parsed
                    .measurements
                    .push(row.value(None, unit, value()?, v, n))
            }
            RocmColumn::Derived => {
                parsed
                    .measurements
                    .push(row.derived(metric::ERROR, "", value()?, v, n, None))
            }
            RocmColumn::Key => {}
        }
    }
    Ok(())
}

pub struct AiterTunedCsv;

/// Columns of a tuned CSV that say which kernel was chosen: kept, not identity.
const CHOSEN: &[&str] = &[
    "kernelId",
    "splitK",
    "kernelName",
    "libtype",
    "solidx",
    "soltype",
];

fn tuned_header(line: &str) -> bool {
    let names = cells(line);
    let has = |n: &str| names.iter().any(|c| c == n);
    has("us") && has("kernelName") && (has("tflops") || has("errRatio"))
}

impl Parser for AiterTunedCsv {
    fn format(&self) -> Format {
        Format::AiterTunedCsv
    }
    fn sniff(&self, text: &str) -> bool {
        text.lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(tuned_header)
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let mut records = lines(text).filter(|(_, l)| !l.trim().is_empty());
        let (header_no, header) = records
            .next()
            .ok_or_else(|| ParseError::at(0, "empty CSV: no header"))?;
        if !tuned_header(&header) {
            return Err(ParseError::at(
                header_no,
                "not an aiter tuned-config header: needs `us`, `kernelName` and `tflops` or \
                 `errRatio` columns",
            ));
        }
        let names = cells(&header);
        let table = file_table(cx, "aiter_tuned");
        let mut parsed = Parsed::default();
        for (no, l) in records {
            let c = cells(&l);
            if c.len() != names.len() {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", c.len(), names.len()),
                ));
            }
            let key: Vec<(String, String)> = names
                .iter()
                .zip(&c)
                .filter(|(n, _)| {
                    !CHOSEN.contains(&n.as_str())
                        && !matches!(n.as_str(), "us" | "tflops" | "bw" | "errRatio")
                })
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect();
            let row = Row::new(table, "tuned", &key, no);
            for (n, v) in names.iter().zip(&c) {
                let value = || {
                    parse_value(v).map_err(|_| {
                        ParseError::at(no, format!("`{v}` under `{n}` is not a number"))
                    })
                };
                let m = match n.as_str() {
                    "us" => row.value(None, "us", value()?, v, n),
                    "tflops" => row.value(None, "TFLOPS", value()?, v, n),
                    "bw" => row.value(None, "TB/s", value()?, v, n),
                    // A tolerated mismatch fraction, not a numerics verdict: kept as
                    // `error_ratio` (derived), never as the `error` a failed check leaves.
                    "errRatio" => row.derived("error_ratio", "", value()?, v, n, None),
                    n if CHOSEN.contains(&n) => row.note(v, n),
                    _ => continue,
                };
                parsed.measurements.push(m);
            }
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_keep_their_commas() {
        assert_eq!(cells("a, b ,c"), ["a", "b", "c"]);
        assert_eq!(
            cells(r#"1,"x, y","say ""hi""""#),
            ["1", "x, y", r#"say "hi""#]
        );
    }

    #[test]
    fn a_tool_prefixed_header_is_found() {
        let h = rocm_header("[0]:transA,transB,M,hipblaslt-Gflops,us").unwrap();
        assert_eq!(h[3], "hipblaslt-Gflops");
        assert!(rocm_header("M,N,K,us").is_none());
        assert!(matches!(
            rocm_column("hipblaslt-GB/s"),
            RocmColumn::Metric("GB/s")
        ));
        assert!(matches!(rocm_column("d_type"), RocmColumn::Key));
    }
}
