//! The ROCm library benches' CSV lines (hipBLASLt-bench, hipblas-bench, rocblas-bench).
//!
//! - **ROCm benches** print a header with a `<tool>-Gflops` column (`hipblaslt-Gflops`,
//!   `rocblas-Gflops`, `hipblas-Gflops`), hipBLASLt prefixed by `[0]:`, and one line of
//!   values under it, anywhere in a log (one header and line per problem). The tool is
//!   the variant, the table `gemm`; `*-Gflops`, `*-GB/s` and `us` are metrics, error
//!   columns derived, every other column is the problem (the key).

use super::support::csv::{cells, cells_into, Columns};
use super::support::emit::Spec;
use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::lines;
use crate::formats::support::text::trim;
use crate::model::Format;
use crate::model::{Name, Parsed, Warning};
use std::borrow::Cow;

/// A ROCm bench header: `[0]:transA,...,hipblaslt-Gflops,...,us` -> its cells.
fn rocm_header(line: &str) -> Option<Vec<String>> {
    // Most lines of a bench log are values or chatter: look for the column first.
    let b = line.as_bytes();
    if crate::formats::support::text::finder!("-Gflops")
        .find(b)
        .is_none()
        && crate::formats::support::text::finder!("-gflops")
            .find(b)
            .is_none()
    {
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
        crate::formats::support::text::finder!("-Gflops,")
            .find(text.as_bytes())
            .is_some()
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
                let want = h.columns.names.len();
                if buf.len() != want {
                    // A line of about the header's cells is a value line that lost or
                    // gained one (cut, garbled): refused, not read as the end of the
                    // values. Log text after the values has few commas, if any.
                    if buf.len() * 2 >= want {
                        return Err(ParseError::at(
                            no,
                            format!("{} cells under a header of {want}", buf.len()),
                        ));
                    }
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
        if let Some((name, arch)) = device_line(text) {
            parsed.provenance.machine = Some(name);
            parsed.provenance.arch = arch;
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

/// The GPU a bench ran on, from its device lines: `(Target device ID is 0)` and
/// `Device ID 0 : AMD Instinct MI300X gfx942:sramecc+:xnack-` give the product name and
/// the arch (`gfx942`, its feature flags dropped). The first device when no target is
/// printed. A bench prints them before its first header: only the text up to there is
/// searched.
fn device_line(text: &str) -> Option<(String, Option<String>)> {
    use crate::formats::support::text::finder;
    let header = finder!("-Gflops")
        .find(text.as_bytes())
        .unwrap_or(text.len());
    let text = &text[..header];
    let first = finder!("Device ID ").find(text.as_bytes())?;
    let target = finder!("Target device ID is ")
        .find(text.as_bytes())
        .and_then(|at| {
            let rest = &text[at + "Target device ID is ".len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse::<u32>().ok()
        });
    // The device block starts at the line of the first `Device ID`.
    let start = text[..first].rfind('\n').map_or(0, |i| i + 1);
    text[start..].lines().find_map(|l| {
        let rest = l.trim().strip_prefix("Device ID ")?;
        let (id, desc) = rest.split_once(" : ")?;
        let id: u32 = id.trim().parse().ok()?;
        if target.is_some_and(|t| t != id) {
            return None;
        }
        let desc = desc.trim();
        let (name, arch) = match desc.rsplit_once(' ') {
            Some((n, a)) if a.starts_with("gfx") => (
                n.trim().to_string(),
                Some(a.split(':').next().unwrap_or(a).to_string()),
            ),
            _ => (desc.to_string(), None),
        };
        (!name.is_empty()).then_some((name, arch))
    })
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
        if crate::formats::support::units::unit_of_any_case(unit).is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_device_is_the_target_device_line() {
        // As hipBLASLt 1.2 prints it on an MI350X (a log in a public issue).
        let log = "Query device success: there are 1 devices. (Target device ID is 0)\n\
                   Device ID 0 : AMD Instinct MI350X gfx950:sramecc+:xnack-\n\
                   with 270.6 GB memory, max. SCLK 2200 MHz, max. MCLK 1900 MHz\n";
        assert_eq!(
            device_line(log),
            Some(("AMD Instinct MI350X".into(), Some("gfx950".into())))
        );
        let two = "(Target device ID is 1)\nDevice ID 0 : AMD Instinct MI300X gfx942\n\
                   Device ID 1 : AMD Instinct MI325X gfx942:sramecc+:xnack-\n";
        assert_eq!(device_line(two).unwrap().0, "AMD Instinct MI325X");
        assert_eq!(device_line("no device here"), None);
    }
}
