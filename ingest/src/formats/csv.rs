//! The CSV outputs: Triton's `save_path` CSV, the ROCm library benches
//! (hipBLASLt-bench, hipblas-bench, rocblas-bench) and aiter's tuned-config CSVs.
//!
//! - **Triton** `perf_report(..., save_path=DIR)` writes `DIR/<plot_name>.csv` with
//!   `df.to_csv(float_format="%.6f", index=False)`: the `x_names` columns, then one column
//!   per line, every number with six decimals, NaN as an empty cell. The file name is the
//!   table. Since Triton 3.6 the line columns carry the ylabel as the printed form does
//!   (`Triton (TFLOPS)`): the unit comes from there. Before, the CSV carries none, so it
//!   comes from `--unit` (else the values are kept `unclassified`: stored, never
//!   compared), and nothing marks where the x columns end: they are the leading columns
//!   whose every value is integral (`512.000000`, or `4096.0` from Triton versions
//!   before `float_format`; Triton's x values are sizes), the rest are lines.
//! - **ROCm benches** print a header with a `<tool>-Gflops` column (`hipblaslt-Gflops`,
//!   `rocblas-Gflops`, `hipblas-Gflops`), hipBLASLt prefixed by `[0]:`, and one line of
//!   values under it, anywhere in a log (one header and line per problem). The tool is
//!   the variant, the table `gemm`; `*-Gflops`, `*-GB/s` and `us` are metrics, error
//!   columns derived, every other column is the problem (the key).
//! - **aiter tuned CSVs** (`gfx,cu_num,M,N,K,q_dtype_w,kernelId,splitK,us,kernelName,
//!   tflops,bw,errRatio`): the file name is the table, the variant `tuned`; `us`, `tflops`
//!   and `bw` (printed in GB/s, stored as TB/s) are metrics, `errRatio` derived
//!   (`error_ratio`), the chosen kernel (`kernelId`, `splitK`, `kernelName`) kept as
//!   notes, the rest the key — a retune that picks another
//!   kernel for a shape is still the same row.

use super::emit::{key_number, KeyLayout, Spec};
use super::triton::line_and_ylabel;
use super::{lines, Context, Format, ParseError, Parser};
use crate::model::{metric, Name, Parsed, Warning};
use crate::text::{parse_value, trim};
use std::borrow::Cow;

/// Split one CSV record; `"..."` cells may hold commas and `""`. Cells borrow from the
/// line unless quoting made them differ.
fn cells(line: &str) -> Vec<Cow<'_, str>> {
    let mut out = Vec::new();
    cells_into(line, &mut out);
    out
}

/// [`cells`] into `out` (cleared first): one list for every record of a file.
fn cells_into<'a>(line: &'a str, out: &mut Vec<Cow<'a, str>>) {
    out.clear();
    if memchr::memchr(b'"', line.as_bytes()).is_none() {
        super::for_each_cell(line, b',', |c| out.push(Cow::Borrowed(c)));
        return;
    }
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
            ',' if !quoted => out.push(Cow::Owned(std::mem::take(&mut cur).trim().to_string())),
            c => cur.push(c),
        }
    }
    out.push(Cow::Owned(cur.trim().to_string()));
}

/// Numbered lines of a text, cleaned.
type Lines<'a> = Box<dyn Iterator<Item = (usize, Cow<'a, str>)> + 'a>;

/// A CSV's first non-empty line (its header, with its line number) and the non-empty
/// lines after it.
fn header_and_records(text: &str) -> Result<(usize, Cow<'_, str>, Lines<'_>), ParseError> {
    let mut records = lines(text).filter(|(_, l)| !l.trim().is_empty());
    let (no, header) = records
        .next()
        .ok_or_else(|| ParseError::at(0, "empty CSV: no header"))?;
    Ok((no, header, Box::new(records)))
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

/// A number pandas wrote for a float column: digits, a point, decimals (six with
/// Triton's `float_format="%.6f"`; as few as one from Triton versions without it).
fn float_cell(cell: &str) -> bool {
    let c = cell.strip_prefix('-').unwrap_or(cell);
    match c.split_once('.') {
        Some((int, frac)) => {
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && !frac.is_empty()
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
        // Detection asks this of every log's first line: most have no comma.
        if memchr::memchr(b',', header.as_bytes()).is_none() {
            return false;
        }
        let names = cells(header);
        if names.len() < 2 || names.iter().any(|n| n.is_empty() || parse_value(n).is_ok()) {
            return false;
        }
        // The first 50 rows all float numbers or empty cells, and at least one with as
        // many cells as the header (a short row is the parser's to report).
        let mut rows = 0;
        for l in ls.take(50) {
            let c = cells(l);
            if !c.iter().all(|c| c.is_empty() || float_cell(c)) {
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
        let (header_no, header, records) = header_and_records(text)?;
        let names = cells(&header);
        let width = names.len();
        // Every row's cells and values, parsed once, kept in two flat lists (`width` per
        // row) rather than two lists per row.
        // Reserved from the text's size (a `%.6f` cell and its comma are 8 bytes or more;
        // capped, so a huge file reserves at most 16 MB a list up front): regrowing the
        // lists cost 4% of the parse.
        let cells_guess = (text.len() / 8).min(1 << 20);
        let mut nos: Vec<usize> = Vec::with_capacity(cells_guess / 4);
        let mut cells_: Vec<&str> = Vec::with_capacity(cells_guess);
        let mut values: Vec<Option<f64>> = Vec::with_capacity(cells_guess);
        for (no, l) in records {
            let l = match l {
                Cow::Borrowed(l) => l,
                // A cleaned line (CI prefix, escapes): no Triton CSV has one.
                Cow::Owned(_) => return Err(ParseError::at(no, "not a CSV row")),
            };
            let before = cells_.len();
            super::for_each_cell(l, b',', |c| cells_.push(c));
            if cells_.len() - before != width {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", cells_.len() - before, width),
                ));
            }
            for cell in &cells_[before..] {
                values.push(
                    parse_value(cell)
                        .map_err(|_| ParseError::at(no, format!("`{cell}` is not a number")))?,
                );
            }
            nos.push(no);
        }
        if nos.is_empty() {
            return Err(ParseError::at(header_no, "a header and no rows"));
        }
        // The x columns: the leading columns before Triton 3.6's `<line> (<ylabel>)`
        // columns, else the leading columns whose every value is integral.
        let ylabels: Vec<Option<(&str, &str)>> = names.iter().map(|n| line_and_ylabel(n)).collect();
        let integral = |c: usize| {
            values[c..]
                .iter()
                .step_by(width)
                .all(|v| v.is_some_and(|v| v.fract() == 0.0))
        };
        let n_x = match ylabels.iter().position(Option::is_some) {
            Some(first) if first > 0 && ylabels[first..].iter().all(Option::is_some) => first,
            _ => (0..width - 1).take_while(|&c| integral(c)).count().max(1),
        };
        let table = file_table(cx, "triton");
        let mut parsed = Parsed::sized_for(text, 24);
        if cx.unit.is_none() && ylabels[n_x..].iter().any(Option::is_none) {
            parsed.warnings.push(Warning {
                line: 0,
                reason: "a Triton CSV has no ylabel: values kept unclassified (not compared); \
                         give --unit (e.g. --unit TFLOPS) to measure them"
                    .to_string(),
            });
        }
        let lines_: Vec<(Name, Spec)> = names[n_x..]
            .iter()
            .zip(&ylabels[n_x..])
            .map(|(n, ylabel)| match (ylabel, cx.unit) {
                (Some((line, ylabel)), _) => (Name::new(line), Spec::measured(None, ylabel, n)),
                (None, Some(unit)) => (Name::new(n), Spec::measured(None, unit, n)),
                (None, None) => (
                    Name::new(n),
                    Spec::derived(
                        metric::UNCLASSIFIED,
                        "",
                        n,
                        Some("no ylabel in the CSV; give --unit"),
                    ),
                ),
            })
            .collect();
        parsed.measurements.reserve(nos.len() * lines_.len());
        let layout = KeyLayout::new(&names[..n_x]);
        let table = Name::new(table);
        let mut key: Vec<&str> = Vec::with_capacity(n_x);
        for ((no, r), values) in nos
            .iter()
            .zip(cells_.chunks_exact(width))
            .zip(values.chunks_exact(width))
        {
            key.clear();
            key.extend(r[..n_x].iter().map(|c| key_number(c)));
            let row = layout.row(&mut parsed.keys, table, table, &key, *no);
            for (k, (variant, spec)) in lines_.iter().enumerate() {
                let c = n_x + k;
                parsed.measurements.push(row.put_as(
                    &mut parsed.keys,
                    *variant,
                    spec,
                    values[c],
                    r[c],
                ));
            }
        }
        Ok(parsed)
    }
}

/// A ROCm bench header: `[0]:transA,...,hipblaslt-Gflops,...,us` -> its cells.
fn rocm_header(line: &str) -> Option<Vec<String>> {
    // Most lines of a bench log are values or chatter: look for the column first.
    let b = line.as_bytes();
    if crate::finder!("-Gflops").find(b).is_none() && crate::finder!("-gflops").find(b).is_none() {
        return None;
    }
    let l = trim(line);
    let l = match l.strip_prefix('[') {
        Some(rest) => rest.split_once("]:").map(|(_, h)| h)?,
        None => l,
    };
    let names: Vec<String> = cells(l).into_iter().map(Cow::into_owned).collect();
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
        let all: Vec<(usize, Cow<str>)> = lines(text).collect();
        let mut parsed = Parsed::sized_for(text, 120);
        let mut i = 0;
        // A bench prints the same header above every problem: lay it out once.
        let mut last: Option<(String, RocmHeader)> = None;
        // One list of cells for every value line.
        let mut buf: Vec<Cow<str>> = Vec::new();
        while i < all.len() {
            let header_text = trim(&all[i].1);
            if last.as_ref().is_none_or(|(t, _)| t != header_text) {
                let Some(names) = rocm_header(header_text) else {
                    i += 1;
                    continue;
                };
                last = Some((header_text.to_string(), RocmHeader::new(names)));
            }
            let h = &last.as_ref().expect("set above").1;
            // The value lines: every following line with as many cells (blank lines
            // between the header and its first values skipped: a log pasted into an
            // issue or PR often has one there).
            let mut j = i + 1;
            while j < all.len() && all[j].1.trim().is_empty() {
                j += 1;
            }
            let first = j;
            while j < all.len() {
                let (no, line) = (all[j].0, &all[j].1);
                cells_into(line, &mut buf);
                if buf.len() != h.columns.names.len() {
                    break;
                }
                h.columns
                    .record(h.table, h.variant, &buf, no, &mut parsed)?;
                j += 1;
            }
            if j == first {
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

/// A ROCm bench header, laid out: its columns, and the tool (`hipblaslt` of
/// `hipblaslt-Gflops`) as the variant.
struct RocmHeader {
    columns: Columns,
    table: Name,
    variant: Name,
}

impl RocmHeader {
    fn new(names: Vec<String>) -> RocmHeader {
        let tool = names
            .iter()
            .find_map(|n| {
                let lower = n.to_ascii_lowercase();
                lower
                    .strip_suffix("-gflops")
                    .map(|t| n[..t.len()].to_string())
            })
            .unwrap_or_default();
        RocmHeader {
            columns: Columns::new(names, rocm_column).with_variants(rocm_variant),
            table: Name::new("gemm"),
            variant: Name::new(&tool),
        }
    }
}

/// A CSV header laid out once: how each column is stored (`None`: part of the key) and
/// the key's layout.
struct Columns {
    names: Vec<String>,
    specs: Vec<Option<Spec>>,
    /// A column's own variant, where it is not the header's (a ROCm bench's CPU
    /// reference columns).
    variants: Vec<Option<Name>>,
    /// The key columns' places in a record, in the order `layout` numbers them.
    key_cols: Vec<usize>,
    layout: KeyLayout,
}

impl Columns {
    fn new(names: Vec<String>, classify: impl Fn(&str) -> Option<Spec>) -> Columns {
        let specs: Vec<Option<Spec>> = names.iter().map(|n| classify(n)).collect();
        let key_names: Vec<&str> = names
            .iter()
            .zip(&specs)
            .filter(|(_, s)| s.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        Columns {
            layout: KeyLayout::new(&key_names),
            key_cols: (0..names.len()).filter(|c| specs[*c].is_none()).collect(),
            variants: vec![None; names.len()],
            specs,
            names,
        }
    }

    /// Give the measured columns `variant_of` names a variant of their own.
    fn with_variants(mut self, variant_of: impl Fn(&str) -> Option<&'static str>) -> Columns {
        for (c, n) in self.names.iter().enumerate() {
            if self.specs[c].is_some() {
                self.variants[c] = variant_of(n).map(Name::new);
            }
        }
        self
    }

    /// One record's values (its cells as many as the header's), appended to `out`: notes
    /// as text, every other stored column as a number.
    fn record(
        &self,
        table: Name,
        variant: Name,
        cells: &[Cow<str>],
        no: usize,
        out: &mut Parsed,
    ) -> Result<(), ParseError> {
        let row = self.layout.row_by(
            &mut out.keys,
            table,
            variant,
            |k| &cells[self.key_cols[k]],
            no,
        );
        for (((n, v), spec), own) in self
            .names
            .iter()
            .zip(cells)
            .zip(&self.specs)
            .zip(&self.variants)
        {
            let Some(spec) = spec else { continue };
            let value = if spec.metric.as_str() == metric::NOTE {
                None
            } else {
                parse_value(v)
                    .map_err(|_| ParseError::at(no, format!("`{v}` under `{n}` is not a number")))?
            };
            out.measurements.push(match own {
                Some(variant) => row.put_as(&mut out.keys, *variant, spec, value, v),
                None => row.put(&mut out.keys, spec, value, v),
            });
        }
        Ok(())
    }
}

/// The variant of a ROCm bench's CPU reference columns (`CPU-Gflops`, `CPU-us`, printed
/// with the bench's `--unit_check` / CPU check): the host's own run of the problem,
/// never the GPU kernel's values.
const CPU_VARIANT: &str = "cpu";

fn rocm_variant(name: &str) -> Option<&'static str> {
    name.get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("cpu-"))
        .then_some(CPU_VARIANT)
}

/// Columns of hipBLASLt's efficiency report (`HIPBLASLT_BENCH_EFF=1`): what the run
/// measured (clocks, efficiency) and what the chosen kernel's tiling gives (granularity,
/// tiles per CU, bytes moved). A rerun or another kernel prints other values: stored,
/// never identity.
fn rocm_efficiency_column(name: &str, lower: &str) -> Option<Spec> {
    let clock = lower.contains("freq") || lower.contains("mclk") || lower.contains("sclk");
    if clock {
        return Some(Spec::derived("clock", "MHz", name, None));
    }
    let tiling = [
        "efficiency",
        "gran",
        "tiles_per_cu",
        "num_cu",
        "mem_read_bytes",
        "mem_write_bytes",
    ];
    tiling
        .iter()
        .any(|w| lower.contains(w))
        .then(|| Spec::derived(lower, "", name, None))
}

/// How a ROCm bench column is stored: a metric in its unit (`hipblaslt-Gflops`,
/// `hipblaslt-GB/s`, `us`, the CPU reference's `CPU-us`), an error column or an
/// efficiency-report column (derived), or `None`: part of the problem.
fn rocm_column(name: &str) -> Option<Spec> {
    let lower = name.to_ascii_lowercase();
    if let Some(spec) = rocm_efficiency_column(name, &lower) {
        return Some(spec);
    }
    if let Some((_, unit)) = name.rsplit_once('-') {
        if crate::units::unit_of_any_case(unit).is_some() {
            return Some(Spec::measured(None, unit, name));
        }
    }
    if lower == "us" || lower == "ms" {
        return Some(Spec::measured(None, name, name));
    }
    if lower.contains("error") || lower.contains("norm") || lower == "atol" || lower == "rtol" {
        return Some(Spec::derived(&format!("error_{lower}"), "", name, None));
    }
    None
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
    // Detection asks this of every log's first line: most have no `kernelName`.
    if !line.contains("kernelName") {
        return false;
    }
    let names = cells(line);
    let has = |n: &str| names.iter().any(|c| c == n);
    // The oldest tuned CSVs print only `M,N,K,kernelId,splitK,us,kernelName`; fused-MoE
    // ones name a kernel per stage (`kernelName1`, `kernelName2`).
    has("us") && names.iter().any(|c| c.starts_with("kernelName"))
}

/// `us1`, `err2`: a fused-MoE tuned CSV's per-stage column of `stem`, or `None`.
fn stage_column<'a>(name: &'a str, stem: &str) -> Option<&'a str> {
    let rest = name.strip_prefix(stem)?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())).then_some(rest)
}

/// How a tuned-config column is stored; `None`: part of the key.
fn tuned_column(name: &str) -> Option<Spec> {
    Some(match name {
        "us" => Spec::measured(None, "us", name),
        "tflops" => Spec::measured(None, "TFLOPS", name),
        // aiter's tuners print bandwidth in GB/s (bytes / 1e9 / seconds): 5004.8 on a GEMM
        // is 5.0 TB/s.
        "bw" => Spec::measured(None, "GB/s", name),
        // A tolerated mismatch fraction, not a numerics verdict: kept as `error_ratio`
        // (derived), never as the `error` a failed check leaves.
        "errRatio" | "err_ratio" => Spec::derived("error_ratio", "", name, None),
        n if CHOSEN.contains(&n) || n.starts_with("kernelName") || n == "_tag" => {
            Spec::derived(metric::NOTE, "", name, None)
        }
        // A fused-MoE stage's time (`us1`, `us2`; `us` is the whole) and its error.
        n if stage_column(n, "us").is_some() => Spec::measured(None, "us", name),
        n if stage_column(n, "err").is_some() => Spec::derived(
            &format!("error_ratio_{}", stage_column(n, "err").unwrap_or_default()),
            "",
            name,
            None,
        ),
        _ => return None,
    })
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
        let (header_no, header, records) = header_and_records(text)?;
        if !tuned_header(&header) {
            return Err(ParseError::at(
                header_no,
                "not an aiter tuned-config header: needs `us` and `kernelName` columns",
            ));
        }
        let names: Vec<String> = cells(&header).into_iter().map(Cow::into_owned).collect();
        let columns = Columns::new(names, tuned_column);
        let (table, variant) = (Name::new(file_table(cx, "aiter_tuned")), Name::new("tuned"));
        let mut parsed = Parsed::sized_for(text, 14);
        // One list of cells for the records read straight from the text.
        let mut buf: Vec<Cow<str>> = Vec::with_capacity(columns.names.len());
        for (no, l) in records {
            let owned;
            let c = match l {
                Cow::Borrowed(l) => {
                    cells_into(l, &mut buf);
                    &buf
                }
                Cow::Owned(l) => {
                    owned = l;
                    &cells(&owned)
                }
            };
            if c.len() != columns.names.len() {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", c.len(), columns.names.len()),
                ));
            }
            columns.record(table, variant, c, no, &mut parsed)?;
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
        assert_eq!(
            rocm_column("hipblaslt-GB/s").unwrap().metric.as_str(),
            "bandwidth"
        );
        assert!(rocm_column("d_type").is_none());
    }
}
