//! rocprofv3's CSVs (`--output-format csv`):
//!
//! - `counter_collection.csv` (`--pmc ...`): one line a counter of a dispatch,
//!   `...,"Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size",...,"Counter_Name",
//!   "Counter_Value","Start_Timestamp","End_Timestamp"`;
//! - `kernel_trace.csv` (`--kernel-trace`): one line a dispatch, its start and end in ns.
//!
//! Each dispatch's counters are measurements of table `rocprofv3`, the kernel the
//! variant; its duration (end - start, ns: the one counter with a direction) and its
//! launch (`Grid_Size` in work-items, `Workgroup_Size`, VGPRs, SGPRs, LDS and scratch
//! bytes) under section `launch`, once a dispatch. rocprofv3 prints no units: a counter
//! keeps its name (`SQ_WAVES`, `FETCH_SIZE`) and is stored as a count. The per-kernel
//! `kernel_stats.csv` is refused by detection (totals of a profiled run).

use super::Kernel;
use crate::formats::parser::{Evidence, ParseError, Parser};
use crate::formats::support::csv::{cells, header_and_records};
use crate::model::Format;
use crate::model::Parsed;
use std::borrow::Cow;

pub struct Rocprofv3Csv;

/// Which of rocprofv3's CSVs a header opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counters,
    KernelTrace,
}

fn kind_of(header: &str) -> Option<Kind> {
    let h = header.trim_start();
    if !h.starts_with('"') || !h.contains("\"Kernel_Name\"") {
        return None;
    }
    if h.contains("\"Counter_Name\"") && h.contains("\"Counter_Value\"") {
        Some(Kind::Counters)
    } else if h.contains("\"Start_Timestamp\"") && h.contains("\"End_Timestamp\"") {
        Some(Kind::KernelTrace)
    } else {
        None
    }
}

impl Parser for Rocprofv3Csv {
    fn format(&self) -> Format {
        Format::Rocprofv3Csv
    }
    fn sniff(&self, text: &str) -> bool {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        kind_of(first).is_some()
    }
    fn evidence(&self, text: &str) -> Evidence {
        super::signature_if(self.sniff(text))
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let (hno, header, records) = header_and_records(text)?;
        let kind = kind_of(&header).ok_or_else(|| {
            ParseError::at(
                hno,
                "not a rocprofv3 counter_collection.csv or kernel_trace.csv header (no \
                 Kernel_Name with Counter_Name/Counter_Value or Start/End_Timestamp)",
            )
        })?;
        let names: Vec<String> = cells(&header).into_iter().map(Cow::into_owned).collect();
        let at = |n: &str| names.iter().position(|c| c == n);
        let mut parsed = Parsed::default();
        let mut dispatches = std::collections::BTreeSet::new();
        for (no, line) in records {
            let row = cells(&line);
            let cell = |n: &str| at(n).and_then(|i| row.get(i)).map(|c| c.trim());
            let kernel = cell("Kernel_Name")
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ParseError::at(no, "a line with no Kernel_Name"))?;
            let dispatch = cell("Dispatch_Id").unwrap_or("");
            let launch = Kernel {
                table: "rocprofv3",
                name: kernel,
                key: vec![("section".into(), "launch".into())],
                line: no,
                settings: false,
            };
            if dispatch.is_empty() || dispatches.insert(dispatch.to_string()) {
                // The columns as printed first, then what is computed from them.
                for (column, unit) in LAUNCH {
                    if let Some(v) = cell(column) {
                        launch.put(&mut parsed, column, unit, v)?;
                    }
                }
                let (start, end) = (cell("Start_Timestamp"), cell("End_Timestamp"));
                if let (Some(s), Some(e)) = (start, end) {
                    let ns = duration(s, e).ok_or_else(|| {
                        ParseError::at(
                            no,
                            format!(
                                "Start_Timestamp `{s}` and End_Timestamp `{e}` are no span of ns"
                            ),
                        )
                    })?;
                    launch.put(&mut parsed, "duration", "ns", &ns.to_string())?;
                }
                for (axis, columns) in [
                    ("Grid_Size", ["Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]),
                    (
                        "Workgroup_Size",
                        ["Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"],
                    ),
                ] {
                    let dims: Option<Vec<&str>> = columns.iter().map(|c| cell(c)).collect();
                    if let Some(dims) = dims {
                        let product = dims
                            .iter()
                            .map(|d| d.parse::<u64>().ok())
                            .try_fold(1u64, |a, d| a.checked_mul(d?))
                            .ok_or_else(|| {
                                ParseError::at(no, format!("{axis} is {dims:?}, not three counts"))
                            })?;
                        launch.put(&mut parsed, axis, "", &product.to_string())?;
                    }
                }
            }
            if kind == Kind::Counters {
                let name = cell("Counter_Name")
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| ParseError::at(no, "a counter line with no Counter_Name"))?;
                let value = cell("Counter_Value").unwrap_or("");
                let k = Kernel {
                    table: "rocprofv3",
                    name: kernel,
                    key: Vec::new(),
                    line: no,
                    settings: false,
                };
                k.put(&mut parsed, name, "", value)?;
            }
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(
                hno,
                "a rocprofv3 CSV with no dispatch under its header: nothing was profiled",
            ));
        }
        Ok(parsed)
    }
}

/// The launch's own columns, once a dispatch, with their units.
const LAUNCH: [(&str, &str); 9] = [
    ("Grid_Size", ""),
    ("Workgroup_Size", ""),
    ("LDS_Block_Size", "byte"),
    ("Scratch_Size", "byte"),
    ("VGPR_Count", ""),
    ("Accum_VGPR_Count", ""),
    ("SGPR_Count", ""),
    ("Group_Segment_Size", "byte"),
    ("Private_Segment_Size", "byte"),
];

/// End - start, in ns, when both are counts of ns and end is not before start.
fn duration(start: &str, end: &str) -> Option<u64> {
    let (s, e) = (start.parse::<u64>().ok()?, end.parse::<u64>().ok()?);
    e.checked_sub(s)
}
