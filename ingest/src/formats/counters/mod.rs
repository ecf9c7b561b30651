//! Hardware counters from the profilers kernel engineers run: Nsight Compute's CSV
//! ([`ncu`]: the details page, the raw page, `--import`ed reports, with the profiled
//! program's own output in the same stream), rocprofv3's counter-collection and
//! kernel-trace CSVs ([`rocprof`]) and Triton proton's hatchet JSON ([`proton`]).
//!
//! Every counter is a measurement of table `ncu`, `rocprofv3` or `proton`, the kernel
//! its variant: its value in a canonical unit (time in ns, bytes, byte/s, Hz; a count
//! or a ratio as printed), its kind and direction in the note (`counter: time, lower
//! is better`; `counter: ratio`). Every counter is stored with direction `none`: a
//! profiled launch is no timed trial (the profiler replays it, flushes caches, fixes
//! clocks), so compare and detect never judge a counter alone; it is diffed beside the
//! rows it explains. A counter is known by the reader that stored it (its note, one of
//! [`Kind::note`]'s, on an undirected measurement: [`is_counter`]), never by its table's
//! name: a benchmark table called `proton` is a benchmark table.
//!
//! `n/a`, `NaN`, ncu's `no data` or an empty cell is null with the counter kept, never 0.
//! Nsight Compute prints words among its counters (`PolicySpread`, `CachePreferNone`,
//! `all`, `No-CC`): every word in an ncu cell is kept as a setting with no value, never a
//! refusal of the file; text that starts like a number and is none (`12.5.3`) is kept
//! the same way and said in a warning, never read as a number. rocprofv3 and proton
//! print numbers only: a word or a garbled number there refuses the file at its line. A value too large for its canonical unit (`1e300 Pbyte`) is null, said
//! in a warning, never stored as infinity.

pub mod ncu;
pub mod proton;
pub mod rocprof;

use super::support::emit::Row;
use super::support::text::parse_value;
use crate::formats::parser::{Evidence, ParseError};
use crate::model::{Measurement, Parsed};

/// A profiler's file is known by its own header or structure: a signature or nothing.
pub(crate) fn signature_if(found: bool) -> Evidence {
    if found {
        Evidence::Signature
    } else {
        Evidence::None
    }
}

/// The tables counters are stored in: one a profiler. A name, never evidence: a
/// counter is known by [`is_counter`].
pub const TABLES: [&str; 3] = ["ncu", "rocprofv3", "proton"];

/// The notes the counter readers store, one a [`Kind`]: what marks a counter.
pub const NOTES: [&str; 6] = [
    Kind::Time.note(),
    Kind::Throughput.note(),
    Kind::Ratio.note(),
    Kind::Count.note(),
    Kind::Frequency.note(),
    Kind::Setting.note(),
];

/// Whether a stored measurement (its direction and note) is a hardware counter: stored
/// undirected by a counter reader, whatever its table is called.
pub fn is_counter_note(direction: crate::model::Direction, note: Option<&str>) -> bool {
    direction == crate::model::Direction::None && note.is_some_and(|n| NOTES.contains(&n))
}

/// Whether `m` is a hardware counter ([`is_counter_note`]).
pub fn is_counter(m: &Measurement) -> bool {
    is_counter_note(m.direction, m.note.as_deref())
}

/// The SQL condition (over measurements aliased `alias`) that holds for counters.
pub fn counter_sql(alias: &str) -> String {
    let notes: Vec<String> = NOTES.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "({alias}.direction = 'none' AND coalesce({alias}.note, '') IN ({}))",
        notes.join(", ")
    )
}

/// The tag a profiled run carries (`profiled=ncu`): its timing rows, run under the
/// profiler's replay, are never a timed trial.
pub const PROFILED_TAG: &str = "profiled";

/// The note on a profiled run's own timing rows (stored undirected: never a trial).
pub fn profiled_note(profiler: &str) -> String {
    format!("profiled: timed under {profiler}, never a trial")
}

/// Whether a note marks a profiled run's timing row.
pub fn is_profiled_note(note: Option<&str>) -> bool {
    note.is_some_and(|n| n.starts_with("profiled: "))
}

/// What a counter measures, told by its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A duration: lower is better.
    Time,
    /// Bytes (or anything) a second.
    Throughput,
    /// A percentage or a per-unit rate (`inst/cycle`).
    Ratio,
    /// Bytes, cycles, instructions, warps, registers: how much.
    Count,
    /// A clock.
    Frequency,
    /// A word, not a number (`PolicySpread`): kept, no value.
    Setting,
}

impl Kind {
    /// The note every counter of this kind is stored with.
    pub const fn note(self) -> &'static str {
        match self {
            Kind::Time => "counter: time, lower is better",
            Kind::Throughput => "counter: throughput",
            Kind::Ratio => "counter: ratio",
            Kind::Count => "counter: count",
            Kind::Frequency => "counter: frequency",
            Kind::Setting => "counter: setting",
        }
    }
}

/// A printed unit: (canonical unit, factor to it, kind). Nsight Compute prints SI
/// prefixes on words (`usecond`, `Mbyte`, `Gbyte/second`, `Mhz`, `cycle/nsecond`);
/// rocprofv3 and proton print none (their counters' units come from their names).
pub fn unit(printed: &str) -> (&'static str, f64, Kind) {
    let p = printed.trim();
    let prefix = |s: &str| -> Option<f64> {
        Some(match s {
            "" => 1.0,
            "K" | "k" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            "P" => 1e15,
            _ => return None,
        })
    };
    let time = |s: &str| -> Option<f64> {
        Some(match s {
            "nsecond" | "ns" => 1.0,
            "usecond" | "us" => 1e3,
            "msecond" | "ms" => 1e6,
            "second" | "s" => 1e9,
            _ => return None,
        })
    };
    if p == "%" {
        return ("%", 1.0, Kind::Ratio);
    }
    if let Some(f) = time(p) {
        return ("ns", f, Kind::Time);
    }
    if let Some((num, per)) = p.split_once('/') {
        // byte/second and its prefixes: a throughput in byte/s.
        if let (Some(rest), Some(t)) = (num.strip_suffix("byte"), time(per)) {
            if let Some(f) = prefix(rest) {
                return ("byte/s", f * 1e9 / t, Kind::Throughput);
            }
        }
        // cycle/nsecond (a clock, as newer ncu prints it).
        if num == "cycle" {
            if let Some(t) = time(per) {
                return ("Hz", 1e9 / t, Kind::Frequency);
            }
        }
        return ("", 1.0, Kind::Ratio);
    }
    if let Some(rest) = p.strip_suffix("byte") {
        if let Some(f) = prefix(rest) {
            return ("byte", f, Kind::Count);
        }
    }
    if let Some(rest) = p.strip_suffix("hz").or_else(|| p.strip_suffix("Hz")) {
        if let Some(f) = prefix(rest) {
            return ("Hz", f, Kind::Frequency);
        }
    }
    ("", 1.0, Kind::Count)
}

/// The warning, once a file, that an ncu cell starting like a number is none: kept as
/// a setting with no value.
fn not_a_number(parsed: &mut Parsed, line: usize, name: &str, cell: &str) {
    const SAID: &str = "Nsight Compute printed a counter that starts like a number";
    if parsed.warnings.iter().any(|w| w.reason.starts_with(SAID)) {
        return;
    }
    parsed.warnings.push(crate::model::Warning {
        line,
        reason: format!(
            "{SAID} and is none (first: {name} `{}`): kept as a setting with no value, \
             never read as a number",
            cell.escape_debug()
        ),
    });
}

/// `v` in a unit `factor` times smaller, as the decimal the source printed would read
/// there (`1048.58` Mbyte is 1048580000 byte, not 1048579999.9999999).
fn scaled(v: f64, factor: f64) -> f64 {
    if factor == 1.0 {
        return v;
    }
    let exp = factor.log10().round() as i32;
    if 10f64.powi(exp) == factor {
        if let Ok(x) = format!("{v}e{exp}").parse::<f64>() {
            return x;
        }
    }
    v * factor
}

/// One kernel's counters, written into a [`Parsed`].
pub(crate) struct Kernel<'a> {
    pub table: &'static str,
    pub name: &'a str,
    /// The counter's place beside the kernel: ncu's section, proton's scope.
    pub key: Vec<(String, String)>,
    pub line: usize,
    /// Whether a word may stand for a unit-less counter's value (ncu prints
    /// `PolicySpread`); rocprofv3 and proton print numbers only.
    pub settings: bool,
}

impl Kernel<'_> {
    /// Store counter `name` printed as `cell` in `printed_unit`. A number in any form
    /// perfdb reads (`1,215,000,000.00`, `4.34e-02`), a missing token (`n/a`, ncu's `no
    /// data`: null), or, where the profiler prints settings, any word (a setting, no
    /// value); anything else refuses the file at the kernel's line.
    pub fn put(
        &self,
        parsed: &mut Parsed,
        name: &str,
        printed_unit: &str,
        cell: &str,
    ) -> Result<(), ParseError> {
        let cell = cell.trim();
        let (canonical, factor, mut kind) = unit(printed_unit);
        let mut value = match parse_value(cell) {
            Ok(v) => v.map(|v| scaled(v, factor)),
            Err(_) if cell.eq_ignore_ascii_case("no data") => None,
            // ncu: a word (`PolicySpread`, `No-CC`) is a setting. Text that starts like a
            // number (`12.5.3`, an instance list) is kept the same way, never refused
            // (ncu's own pages must read) nor read as a number, and said once a file.
            Err(_) if self.settings => {
                if cell.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c)) {
                    not_a_number(parsed, self.line, name, cell);
                }
                kind = Kind::Setting;
                None
            }
            Err(_) => {
                return Err(ParseError::at(
                    self.line,
                    format!(
                        "counter {name} of kernel {} is `{}`, not a number",
                        self.name,
                        cell.escape_debug()
                    ),
                ))
            }
        };
        if value.is_some_and(|v| !v.is_finite()) {
            parsed.warnings.push(crate::model::Warning {
                line: self.line,
                reason: format!(
                    "counter {name} of kernel {} is `{} {}`, beyond what a number holds in \
                     {canonical}: stored as missing",
                    self.name,
                    cell.escape_debug(),
                    printed_unit.trim().escape_debug()
                ),
            });
            value = None;
        }
        let row = Row::new(
            &mut parsed.keys,
            self.table,
            self.name,
            &self.key,
            self.line,
        );
        let raw = if printed_unit.trim().is_empty() || factor == 1.0 {
            parsed.keys.raw(cell)
        } else {
            parsed.keys.raw_joined(cell, printed_unit.trim())
        };
        parsed.measurements.push(Measurement {
            table: row.table,
            variant: row.variant,
            key: row.key,
            key_order: row.key_order,
            metric: name.into(),
            unit: if kind == Kind::Setting {
                "".into()
            } else if canonical.is_empty() {
                printed_unit.trim().into()
            } else {
                canonical.into()
            },
            direction: crate::model::Direction::None,
            value,
            raw,
            column: name.into(),
            numerics: crate::model::Numerics::NotChecked,
            line: self.line as u32,
            note: Some(kind.note().into()),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_to_their_canonical_form() {
        assert_eq!(unit("usecond"), ("ns", 1e3, Kind::Time));
        assert_eq!(unit("Mbyte"), ("byte", 1e6, Kind::Count));
        assert_eq!(unit("Gbyte/second"), ("byte/s", 1e9, Kind::Throughput));
        assert_eq!(unit("Tbyte/s"), ("byte/s", 1e12, Kind::Throughput));
        assert_eq!(unit("byte/usecond"), ("byte/s", 1e6, Kind::Throughput));
        assert_eq!(unit("hz"), ("Hz", 1.0, Kind::Frequency));
        assert_eq!(unit("Ghz"), ("Hz", 1e9, Kind::Frequency));
        assert_eq!(unit("cycle/nsecond"), ("Hz", 1e9, Kind::Frequency));
        assert_eq!(unit("%"), ("%", 1.0, Kind::Ratio));
        assert_eq!(unit("inst/cycle"), ("", 1.0, Kind::Ratio));
        assert_eq!(unit("cycle"), ("", 1.0, Kind::Count));
        assert_eq!(unit("register/thread").2, Kind::Ratio);
        assert_eq!(unit(""), ("", 1.0, Kind::Count));
        assert_eq!(scaled(1048.58, 1e6), 1048580000.0);
        assert_eq!(scaled(12.35, 1e3), 12350.0);
    }
}
