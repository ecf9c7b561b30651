//! Nsight Compute's CSV (`ncu --csv`), as people run it: `ncu --csv ... python3
//! bench.py > out.csv` leaves the program's own output, `==PROF==`/`==WARNING==` lines
//! and the CSV in one stream.
//!
//! - The details page (the default): one line a metric of a launch, `"ID","Process
//!   ID",...,"Kernel Name",...,"Section Name","Metric Name","Metric Unit","Metric
//!   Value"` (with `Block Size`/`Grid Size`, `Rule ...` columns in newer versions; a rule's
//!   advice line holds no metric and is not stored). `ncu --import report.ncu-rep --csv`
//!   prints the same page.
//! - The raw page (`--page raw`): one line a launch, a metric a column, the units on the
//!   line under the header.
//!
//! Each launch's counters are measurements of table `ncu`, the kernel the variant, the
//! section (details page) the key; launches of one kernel are repeats of its rows. With
//! `--nvtx`, the NVTX ranges a launch ran in (their names, outermost first, `/` between)
//! are the key's `nvtx`: the harness's own mark of what the kernel belongs to.
//!
//! Every counter cell reads: a number, a missing token (`no data`, `n/a`, empty: null,
//! the counter kept) or a word (`PolicySpread`, `No-CC`: a setting, no value). The
//! launch's own columns (ID, process, host, context, stream, device, CC) and the raw
//! page's device attributes (`device__attribute_*`: the GPU, not the kernel) are not
//! stored. Its
//! `Grid Size` (blocks) and `Block Size` (threads), printed `(9, 32, 1)`, are stored as
//! their products under section `launch`, so a padded buffer that grows the grid shows as a counter that moved, not
//! as a new series. The benchmark's own lines around the CSV are read by their own format
//! (`formats::parse_in`).

use super::Kernel;
use crate::formats::parser::{Evidence, ParseError, Parser};
use crate::formats::support::csv::cells;
use crate::formats::support::lines;
use crate::model::Format;
use crate::model::Parsed;
use std::borrow::Cow;

pub struct NcuCsv;

impl Parser for NcuCsv {
    fn format(&self) -> Format {
        Format::NcuCsv
    }
    fn sniff(&self, text: &str) -> bool {
        carries(text)
    }
    fn evidence(&self, text: &str) -> Evidence {
        super::signature_if(self.sniff(text))
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::default();
        read_into(text, &mut parsed)?;
        Ok(parsed)
    }
}

/// Which page a header opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Page {
    Details,
    Raw,
}

/// The columns a header names.
struct Header {
    line: usize,
    page: Page,
    cells: Vec<String>,
}

impl Header {
    fn at(&self, name: &str) -> Option<usize> {
        self.cells.iter().position(|c| c == name)
    }
}

/// A header line: its first cell `ID`, a `Kernel Name` among them.
fn header_of(no: usize, line: &str) -> Option<Header> {
    let t = line.trim_start();
    if !t.starts_with("\"ID\",") {
        return None;
    }
    let cells: Vec<String> = cells(t).into_iter().map(Cow::into_owned).collect();
    if !cells.iter().any(|c| c == "Kernel Name") {
        return None;
    }
    let details =
        cells.iter().any(|c| c == "Metric Name") && cells.iter().any(|c| c == "Metric Value");
    Some(Header {
        line: no,
        page: if details { Page::Details } else { Page::Raw },
        cells,
    })
}

/// Whether `text` names ncu's `Kernel Name` column (one cached search).
fn names_kernels(text: &str) -> bool {
    crate::formats::support::text::finder!("\"Kernel Name\"")
        .find(text.as_bytes())
        .is_some()
}

fn find_header(text: &str) -> Option<Header> {
    if !names_kernels(text) {
        return None;
    }
    lines(text).find_map(|(no, l)| header_of(no, &l))
}

/// `==PROF== ... No kernels were profiled.`: its line.
fn nothing_profiled(text: &str) -> Option<usize> {
    let said = crate::formats::support::text::finder!("No kernels were profiled");
    said.find(text.as_bytes())?;
    lines(text)
        .find(|(_, l)| l.starts_with("==") && l.contains("No kernels were profiled"))
        .map(|(no, _)| no)
}

/// Whether `text` carries Nsight Compute's CSV (a header, or its note that nothing was
/// profiled).
pub fn carries(text: &str) -> bool {
    find_header(text).is_some() || nothing_profiled(text).is_some()
}

/// The lines of `text` that are Nsight Compute's: the CSV's headers, units and records,
/// and its `==PROF==`-style notes. What is left is the profiled program's output.
pub fn own_lines(text: &str) -> Vec<usize> {
    let mut own = Vec::new();
    let mut in_csv = false;
    for (no, l) in lines(text) {
        let t = l.trim_start();
        if t.starts_with("==PROF==") || t.starts_with("==WARNING==") || t.starts_with("==ERROR==") {
            own.push(no);
        } else if header_of(no, t).is_some() {
            in_csv = true;
            own.push(no);
        } else if in_csv && t.starts_with('"') {
            own.push(no);
        }
    }
    own
}

/// `text` with Nsight Compute's own lines blanked: the profiled program's output, each
/// line where it was (so errors name the file's own line numbers).
pub fn without_own(text: &str) -> String {
    let own = own_lines(text);
    let mut out = String::with_capacity(text.len());
    let mut next = own.iter().peekable();
    for (i, l) in crate::formats::support::split_bytes(text, b'\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if next.peek() == Some(&&(i + 1)) {
            next.next();
        } else {
            out.push_str(l);
        }
    }
    out
}

/// The counters of every launch in `text` into `parsed`: how many were stored. A file
/// with an ncu header and no launch under it, or ncu's note that nothing was profiled,
/// is refused at that line.
pub(crate) fn read_into(text: &str, parsed: &mut Parsed) -> Result<usize, ParseError> {
    let Some(first) = find_header(text) else {
        let line = nothing_profiled(text).unwrap_or(0);
        return Err(ParseError::at(
            line,
            "Nsight Compute profiled no kernel (`No kernels were profiled`): a `-k` filter \
             that matched nothing, or a program that launched none",
        ));
    };
    let mut header = first;
    let mut stored = 0;
    let mut launches = std::collections::BTreeSet::new();
    let mut units: Option<Vec<String>> = None;
    for (no, l) in lines(text) {
        if no <= header.line {
            continue;
        }
        let t = l.trim_start();
        if let Some(h) = header_of(no, t) {
            header = h;
            units = None;
            continue;
        }
        if !t.starts_with('"') {
            continue; // the program's own output, ncu's notes
        }
        let row: Vec<Cow<str>> = cells(t);
        // The raw page's units line: under its header, no launch id.
        if header.page == Page::Raw && units.is_none() && row.first().is_some_and(|c| c.is_empty())
        {
            units = Some(row.into_iter().map(Cow::into_owned).collect());
            continue;
        }
        let id = row.first().map(|c| c.trim()).unwrap_or("");
        if id.parse::<u64>().is_err() {
            return Err(ParseError::at(
                no,
                format!(
                    "a line of Nsight Compute's CSV whose launch ID is `{}`, not a number",
                    id.escape_debug()
                ),
            ));
        }
        let cell = |name: &str| header.at(name).and_then(|i| row.get(i)).map(|c| c.trim());
        let kernel = cell("Kernel Name")
            .filter(|k| !k.is_empty())
            .ok_or_else(|| {
                ParseError::at(no, "a line of Nsight Compute's CSV with no kernel name")
            })?;
        let nvtx = nvtx_of(&header, &row);
        // A launch's grid and block, once per launch.
        if launches.insert((header.line, id.to_string())) {
            let k = Kernel {
                table: "ncu",
                name: kernel,
                key: with_nvtx(vec![("section".into(), "launch".into())], &nvtx),
                line: no,
                settings: true,
            };
            for column in ["Grid Size", "Block Size"] {
                if let Some(dims) = cell(column).filter(|c| !c.is_empty()) {
                    let threads = threads(dims).ok_or_else(|| {
                        ParseError::at(no, format!("{column} is `{dims}`, not (x, y, z)"))
                    })?;
                    k.put(parsed, column, "", &threads.to_string())?;
                    stored += 1;
                }
            }
        }
        stored += match header.page {
            Page::Details => details_line(&header, &row, kernel, &nvtx, no, parsed)?,
            Page::Raw => raw_line(&header, units.as_deref(), &row, kernel, &nvtx, no, parsed)?,
        };
    }
    if launches.is_empty() {
        return Err(ParseError::at(
            header.line,
            "an Nsight Compute CSV header with no kernel launch under it: nothing was \
             profiled (a `-k` filter that matched no kernel?)",
        ));
    }
    Ok(stored)
}

/// Whether a header cell is one of `--nvtx`'s columns (`thread Domain:Push/Pop_Range:...`,
/// `Id:Domain:Start/Stop_Range:...`).
fn is_nvtx_column(name: &str) -> bool {
    name.contains("Domain:") && name.contains("_Range")
}

/// The NVTX ranges a launch ran in, from `--nvtx`'s columns: each cell lists the thread
/// and its ranges as `"<domain>:NAME:..."`; the names, outermost first, `/` between.
fn nvtx_of(header: &Header, row: &[Cow<str>]) -> String {
    let mut names = Vec::new();
    for (i, c) in header.cells.iter().enumerate() {
        if !is_nvtx_column(c) {
            continue;
        }
        let Some(cell) = row.get(i) else { continue };
        for quoted in cell.split('"').skip(1).step_by(2) {
            // `<default domain>:torch:none:...`: the domain, then the range's message.
            let mut parts = quoted.splitn(3, ':');
            let (Some(_domain), Some(name)) = (parts.next(), parts.next()) else {
                continue;
            };
            let name = name.trim();
            if !name.is_empty() && name != "none" {
                names.push(name.to_string());
            }
        }
    }
    names.join("/")
}

fn with_nvtx(mut key: Vec<(String, String)>, nvtx: &str) -> Vec<(String, String)> {
    if !nvtx.is_empty() {
        key.push(("nvtx".into(), nvtx.into()));
    }
    key
}

/// A raw page's column that is the launch's, or the device's, never a counter of the
/// kernel: ID, process, host, context, stream, device, CC (no `__`), `--nvtx`'s
/// columns, `device__attribute_*`.
fn not_a_counter(name: &str, unit: &str) -> bool {
    (!name.contains("__") && unit.is_empty())
        || is_nvtx_column(name)
        || name.starts_with("device__attribute_")
}

/// `(9, 32, 1)` -> 288.
fn threads(dims: &str) -> Option<u64> {
    let inner = dims.trim().strip_prefix('(')?.strip_suffix(')')?;
    inner
        .split(',')
        .map(|d| d.trim().parse::<u64>().ok())
        .try_fold(1u64, |acc, d| acc.checked_mul(d?))
}

fn details_line(
    header: &Header,
    row: &[Cow<str>],
    kernel: &str,
    nvtx: &str,
    no: usize,
    parsed: &mut Parsed,
) -> Result<usize, ParseError> {
    let cell = |name: &str| header.at(name).and_then(|i| row.get(i)).map(|c| c.trim());
    let Some(metric) = cell("Metric Name").filter(|m| !m.is_empty()) else {
        return Ok(0); // a rule's advice: no metric of its own
    };
    let value = cell("Metric Value")
        .ok_or_else(|| ParseError::at(no, format!("metric {metric} has no Metric Value cell")))?;
    let section = cell("Section Name").unwrap_or("");
    let k = Kernel {
        table: "ncu",
        name: kernel,
        key: with_nvtx(vec![("section".into(), section.into())], nvtx),
        line: no,
        settings: true,
    };
    k.put(parsed, metric, cell("Metric Unit").unwrap_or(""), value)?;
    Ok(1)
}

fn raw_line(
    header: &Header,
    units: Option<&[String]>,
    row: &[Cow<str>],
    kernel: &str,
    nvtx: &str,
    no: usize,
    parsed: &mut Parsed,
) -> Result<usize, ParseError> {
    let k = Kernel {
        table: "ncu",
        name: kernel,
        key: with_nvtx(Vec::new(), nvtx),
        line: no,
        settings: true,
    };
    let mut n = 0;
    for (i, name) in header.cells.iter().enumerate() {
        let unit = units
            .and_then(|u| u.get(i))
            .map(String::as_str)
            .unwrap_or("");
        // Metrics are ncu's `unit__counter.rollup` names or carry a unit.
        if not_a_counter(name, unit) {
            continue;
        }
        let Some(value) = row.get(i) else { continue };
        k.put(parsed, name, unit, value)?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvtx_ranges_read_from_their_column() {
        let header = header_of(
            1,
            r#""ID","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name""#,
        )
        .unwrap();
        let row = cells(
            r#""0","1874  ""<default domain>:triton:none:none:none:none:none:none"" ","matmul_kernel""#,
        );
        assert_eq!(nvtx_of(&header, &row), "triton");
        let none = cells(r#""0","","matmul_kernel""#);
        assert_eq!(nvtx_of(&header, &none), "");
        assert!(not_a_counter("device__attribute_display_name", ""));
        assert!(not_a_counter("Host Name", ""));
        assert!(!not_a_counter("launch__func_cache_config", ""));
    }

    #[test]
    fn a_grid_reads_as_its_threads() {
        assert_eq!(threads("(9, 32, 1)"), Some(288));
        assert_eq!(threads("(256,1,1)"), Some(256));
        assert_eq!(threads("9, 32"), None);
    }
}
