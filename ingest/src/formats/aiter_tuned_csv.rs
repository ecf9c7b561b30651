//! aiter's tuned-config CSVs.
//!
//! - **aiter tuned CSVs** (`gfx,cu_num,M,N,K,q_dtype_w,kernelId,splitK,us,kernelName,
//!   tflops,bw,errRatio`): the file name is the table, the variant `tuned`; `us`, `tflops`
//!   and `bw` (printed in GB/s, stored as TB/s) are metrics, `errRatio` derived
//!   (`error_ratio`), the chosen kernel (`kernelId`, `splitK`, `kernelName`) kept as
//!   notes, the rest the key — a retune that picks another
//!   kernel for a shape is still the same row.

use super::support::csv::{cells, cells_into, file_table, header_and_records, Columns, Lines};
use super::support::emit::Spec;
use crate::formats::parser::{Context, ParseError, Parser};
use crate::model::Format;
use crate::model::{metric, Name, Parsed};
use std::borrow::Cow;

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
        let (names, records) = tuned_records(text)?;
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

/// A tuned CSV's column names and its records, or why its header is not one.
fn tuned_records(text: &str) -> Result<(Vec<String>, Lines<'_>), ParseError> {
    let (header_no, header, records) = header_and_records(text)?;
    if !tuned_header(&header) {
        return Err(ParseError::at(
            header_no,
            "not an aiter tuned-config header: needs `us` and `kernelName` columns",
        ));
    }
    Ok((
        cells(&header).into_iter().map(Cow::into_owned).collect(),
        records,
    ))
}

/// What a tuned CSV chose for each shape: its key cells (every column neither chosen nor
/// measured, as printed) and the chosen columns in one line (`kernelId=34 splitK=0
/// kernelName=...`), in file order: the autotuner's choice that
/// [`crate::kernel_identity::autotune::compare_choices`] compares across two versions.
pub fn choices(text: &str) -> Result<Vec<crate::kernel_identity::autotune::Choice>, ParseError> {
    let (names, records) = tuned_records(text)?;
    let chosen = |n: &str| CHOSEN.contains(&n) || n.starts_with("kernelName");
    let mut out = Vec::new();
    for (no, l) in records {
        let c = cells(&l);
        if c.len() != names.len() {
            return Err(ParseError::at(
                no,
                format!("{} cells under {} columns", c.len(), names.len()),
            ));
        }
        let mut key = Vec::new();
        let mut winner = Vec::new();
        for (n, v) in names.iter().zip(&c) {
            if chosen(n) {
                winner.push(format!("{n}={v}"));
            } else if tuned_column(n).is_none() {
                key.push((n.clone(), v.to_string()));
            }
        }
        out.push(crate::kernel_identity::autotune::Choice {
            key,
            winner: winner.join(" "),
        });
    }
    Ok(out)
}
