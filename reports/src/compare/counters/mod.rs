//! Step 5: the hardware counters that moved with the rows. A profiled trial's counters
//! (stored by ingest's `formats::counters`, known by their note, never by a table's
//! name) are never judged: here each kernel's counters are diffed base against head, and
//! the kernels are joined to the rows that changed on evidence only:
//!
//! 1. `--kernel ROW=KERNEL`, as asked;
//! 2. the harness's own marks: an NVTX range (`ncu --nvtx`) or proton scope the kernel
//!    ran in that is the row's table or variant (`triton`, `matmul`);
//! 3. a word of the kernel's name that is a word of the row's table or variant
//!    (`add_kernel` joins table `add`) — never of its key: a dtype (`bfloat16`), a unit,
//!    a number or a column name (`dim`) names no kernel;
//! 4. the only kernel profiled on both sides.
//!
//! When several kernels join a row, those whose own duration moved with the row's time
//! lead, each with its reading; the rest are one line. A row no kernel joins is a
//! warning naming `--kernel`, with the kernel whose duration moved as a hint, never a
//! join. A launch that grew with the change (a padded buffer grows the grid) is a
//! counter that moved, never a new kernel: the grid is no part of a kernel's identity.

pub(crate) use super::load::Counters;
use super::{CompareError, Options, Report, Row, SideInfo, Verdict};
use crate::db::{sql_str, Db};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod join;
mod reading;

use join::{duration_change, join, moved_with};
use reading::reading;

/// A counter moving less than this (relative) is unchanged.
pub const MOVED: f64 = 0.05;

/// The counters of a changed row's kernel, base against head.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Explained {
    pub table: String,
    pub variant: String,
    pub key_text: String,
    pub metric: String,
    /// The row's own change (head / base - 1).
    pub change: Option<f64>,
    /// The profiler's table (`ncu`, `rocprofv3`, `proton`) and the kernel.
    pub profiler: String,
    pub kernel: String,
    /// How the kernel was joined to the row.
    pub joined_by: String,
    /// The counters that moved by at least [`MOVED`], largest first.
    pub moved: Vec<CounterMove>,
    /// Counters present on both sides that did not move.
    pub unchanged: usize,
    /// What the moves say together, when they say something (`the kernel moves more
    /// data`).
    pub reading: Option<String>,
    /// The kernel's own duration, head / base - 1, where the profiler timed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_change: Option<f64>,
    /// The other kernels joined to the same row whose own duration did not move with
    /// it (on the row's first entry only): one line, not a reading each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_joined: Vec<String>,
}

/// One counter of one kernel on both sides: the median of its values on each.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CounterMove {
    pub name: String,
    /// Where the profiler filed it (ncu's section, proton's scope), empty if nowhere.
    pub place: String,
    pub unit: String,
    pub base: f64,
    pub head: f64,
    /// head / base - 1; `None` when base is 0.
    pub change: Option<f64>,
}

/// One kernel's counters on both sides: (name, place, unit) -> (base, head).
type Diffs = BTreeMap<(String, String, String), (f64, f64)>;

/// A kernel profiled on both sides: its counters' medians, and the marks its harness
/// gave it (NVTX ranges, proton scopes).
#[derive(Default)]
struct Profiled {
    diffs: Diffs,
    marks: BTreeSet<String>,
}

/// The kernels profiled on both sides, each with its counters' medians and marks.
fn kernels(base: &Counters, head: &Counters) -> BTreeMap<(String, String), Profiled> {
    let mut out: BTreeMap<(String, String), Profiled> = BTreeMap::new();
    for (id, hv) in head {
        let Some(bv) = base.get(id) else { continue };
        let (Some(b), Some(h)) = (median(bv), median(hv)) else {
            continue;
        };
        let (place, marks) = place_of(&id.key);
        let k = out
            .entry((id.table.clone(), id.variant.clone()))
            .or_default();
        k.marks.extend(marks);
        k.diffs
            .insert((id.metric.clone(), place, id.unit.clone()), (b, h));
    }
    out
}

fn median(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// The values of a counter's key (`{"section":"Memory Workload Analysis"}`), joined; and
/// the marks among them (each NVTX range and proton scope, lower case).
fn place_of(key: &str) -> (String, Vec<String>) {
    match serde_json::from_str::<serde_json::Value>(key) {
        Ok(serde_json::Value::Object(m)) => {
            let marks = ["nvtx", "scope"]
                .iter()
                .filter_map(|k| m.get(*k).and_then(|v| v.as_str()))
                .flat_map(|v| v.split('/'))
                .filter(|v| !v.is_empty())
                .map(str::to_ascii_lowercase)
                .collect();
            let place = m
                .values()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(" / ");
            (place, marks)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// A row that changed, as the join and the section read it: a compared row, or the
/// series of a stored alert.
pub(crate) struct Changed<'a> {
    pub(crate) table: &'a str,
    pub variant: &'a str,
    pub key_text: &'a str,
    pub metric: &'a str,
    pub change: Option<f64>,
}

impl Changed<'_> {
    fn describe(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.table,
            self.variant,
            self.key_text,
            self.metric,
            self.change
                .map(crate::fmt::signed_pct)
                .unwrap_or_else(|| "-".into())
        )
    }
}

/// The counters of every changed row's kernels, and notes: rows several kernels join
/// with none's duration moving, rows no kernel joins.
pub(crate) fn explain(
    rows: &[Row],
    base: &Counters,
    head: &Counters,
    opt: &Options,
) -> (Vec<Explained>, Vec<String>) {
    let changed: Vec<Changed> = rows
        .iter()
        .filter(|r| !r.control && matches!(r.verdict, Verdict::Regression | Verdict::Improvement))
        .map(|r| Changed {
            table: &r.table,
            variant: &r.variant,
            key_text: &r.key_text,
            metric: &r.metric,
            change: r.change,
        })
        .collect();
    explain_changed(&changed, base, head, &opt.kernels)
}

/// [`explain`] over rows given as [`Changed`], with the `--kernel` joins asked for.
pub(crate) fn explain_changed(
    changed: &[Changed],
    base: &Counters,
    head: &Counters,
    asked_joins: &[(String, String)],
) -> (Vec<Explained>, Vec<String>) {
    let kernels = kernels(base, head);
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if kernels.is_empty() {
        return (out, notes);
    }
    let mut unjoined = Vec::new();
    for row in changed {
        let joined = join(row, &kernels, asked_joins);
        if joined.is_empty() {
            unjoined.push(row);
            continue;
        }
        let mut all: Vec<Explained> = joined
            .into_iter()
            .map(|((profiler, kernel), how)| {
                let p = &kernels[&(profiler.clone(), kernel.clone())];
                moved_counters(row, profiler, kernel, how, &p.diffs)
            })
            .collect();
        if all.len() == 1 || all.iter().all(|e| e.duration_change.is_none()) {
            out.extend(all);
            continue;
        }
        // Several kernels: those whose own duration moved with the row lead.
        all.sort_by(|a, b| {
            let size = |e: &Explained| e.duration_change.map_or(0.0, f64::abs);
            size(b).total_cmp(&size(a)).then(a.kernel.cmp(&b.kernel))
        });
        let (mut lead, rest): (Vec<Explained>, Vec<Explained>) = all
            .into_iter()
            .partition(|e| moved_with(e.duration_change, row.change));
        let rest_names: Vec<String> = rest.iter().map(|e| e.kernel.clone()).collect();
        match lead.first_mut() {
            Some(first) => first.also_joined = rest_names,
            None => notes.push(format!(
                "{}: {} kernel(s) joined ({}), none whose own duration moved with the row: {}",
                row.describe(),
                rest.len(),
                rest[0].joined_by,
                shortened(&rest_names, 3)
            )),
        }
        out.extend(lead);
    }
    if !unjoined.is_empty() {
        notes.push(unjoined_note(&unjoined, &kernels));
    }
    (out, notes)
}

/// At most `n` names, and how many more.
fn shortened(names: &[String], n: usize) -> String {
    let mut s = names
        .iter()
        .take(n)
        .map(|k| crate::fmt::shorten(k, 60))
        .collect::<Vec<_>>()
        .join("; ");
    if names.len() > n {
        s.push_str(&format!(" and {} more", names.len() - n));
    }
    s
}

/// The warning for changed rows no kernel joins: the flag that joins them, and as a hint
/// (never a join) the kernel whose own duration moved most with the first such row.
fn unjoined_note(rows: &[&Changed], kernels: &BTreeMap<(String, String), Profiled>) -> String {
    let mut note = format!(
        "{} kernel(s) were profiled on both sides, but {} changed row(s) join none of them \
         by evidence (a range, a scope, a name): join them with --kernel ROW=KERNEL",
        kernels.len(),
        rows.len()
    );
    let first = rows[0];
    let hint = kernels
        .iter()
        .filter_map(|(k, p)| duration_change(&p.diffs).map(|c| (k, c)))
        .filter(|(_, c)| moved_with(Some(*c), first.change))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    if let Some(((_, kernel), c)) = hint {
        note.push_str(&format!(
            "; for {}, {}'s own duration moved {} (a hint, not a join)",
            first.describe(),
            crate::fmt::shorten(kernel, 60),
            crate::fmt::signed_pct(c)
        ));
    }
    note
}

/// One joined kernel's counters that moved, largest first, with their reading.
fn moved_counters(
    row: &Changed,
    profiler: &str,
    kernel: &str,
    how: String,
    diffs: &Diffs,
) -> Explained {
    let mut moved: Vec<CounterMove> = diffs
        .iter()
        .map(|((name, place, unit), &(b, h))| CounterMove {
            name: name.clone(),
            place: place.clone(),
            unit: unit.clone(),
            base: b,
            head: h,
            change: (b != 0.0).then(|| h / b - 1.0),
        })
        .filter(|m| match m.change {
            Some(c) => c.abs() >= MOVED,
            None => m.head != 0.0,
        })
        .collect();
    moved.sort_by(|a, b| size(b).total_cmp(&size(a)).then(a.name.cmp(&b.name)));
    Explained {
        table: row.table.to_string(),
        variant: row.variant.to_string(),
        key_text: row.key_text.to_string(),
        metric: row.metric.to_string(),
        change: row.change,
        profiler: profiler.to_string(),
        kernel: kernel.to_string(),
        joined_by: how,
        reading: reading(&moved, diffs),
        unchanged: diffs.len() - moved.len(),
        duration_change: duration_change(diffs),
        also_joined: Vec::new(),
        moved,
    }
}

/// The report's counters section: the counters of every changed row's kernels (both
/// sides' `counters`), and a warning when kernels were profiled that no changed row
/// joins, or when the sides hold counters and nothing else.
pub(crate) fn section(
    rows: &[Row],
    counters: &[Counters; 2],
    opt: &Options,
    warnings: &mut Vec<String>,
) -> Vec<Explained> {
    let (explained, notes) = explain(rows, &counters[0], &counters[1], opt);
    warnings.extend(notes);
    if rows.is_empty() && counters.iter().any(|c| !c.is_empty()) {
        warnings.push(
            "the sides hold hardware counters only (ncu, rocprofv3, proton): a counter is \
             diffed beside the benchmark rows it explains, never judged alone; ingest the \
             benchmark's own output under the same labels"
                .into(),
        );
    }
    explained
}

/// The counters both sides' labels hold now, joined to the report's changed rows: for a
/// comparison whose profiled trials were stored after it decided (`perfdb ab
/// --profile`). A side selected by commit reads that commit's counters only.
pub fn attach(db: &Db, report: &mut Report) -> Result<(), CompareError> {
    let base = side_counters(db, &report.base)?;
    let head = side_counters(db, &report.head)?;
    let (explained, notes) = explain(&report.rows, &base, &head, &report.options);
    report.counters = explained;
    report.warnings.extend(notes);
    Ok(())
}

fn side_counters(db: &Db, side: &SideInfo) -> Result<Counters, CompareError> {
    let commits: &[String] = if side.matched_by == super::MatchedBy::Label {
        &[]
    } else {
        &side.commits
    };
    counters_at(db, &side.labels, commits)
}

/// Every counter value the runs of `labels` hold, those of `commits` only when given.
pub(crate) fn counters_at(
    db: &Db,
    labels: &[String],
    commits: &[String],
) -> Result<Counters, CompareError> {
    let list = |v: &[String]| v.iter().map(|s| sql_str(s)).collect::<Vec<_>>().join(", ");
    let commits = if commits.is_empty() {
        String::new()
    } else {
        format!(
            " AND m.run_id IN (SELECT run_id FROM runs WHERE \"commit\" IN ({}))",
            list(commits)
        )
    };
    super::load::counters_where(db, labels, &commits)
}

/// The counters that moved with each changed row, as every report prints them: a line a row
/// and kernel (the row, its change, the kernel, how it was joined, what the moves say),
/// then its counters, largest move first, at most `most` of them.
pub fn lines(counters: &[Explained], most: usize) -> Vec<(String, Vec<String>)> {
    counters
        .iter()
        .map(|e| {
            let own = e
                .duration_change
                .map(|c| format!(", its duration {}", crate::fmt::signed_pct(c)))
                .unwrap_or_default();
            let head = format!(
                "{} {} {} {} {}: {} ({}, joined by {}{own}){}",
                e.table,
                e.variant,
                e.key_text,
                e.metric,
                e.change
                    .map(crate::fmt::signed_pct)
                    .unwrap_or_else(|| "-".into()),
                e.kernel,
                e.profiler,
                e.joined_by,
                e.reading
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            let mut lines: Vec<String> = e
                .moved
                .iter()
                .take(most)
                .map(|m| {
                    let place = if m.place.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", m.place)
                    };
                    let unit = if m.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", m.unit)
                    };
                    format!(
                        "{}{place}: {} -> {}{unit} ({})",
                        m.name,
                        crate::fmt::num(m.base),
                        crate::fmt::num(m.head),
                        m.change
                            .map(crate::fmt::signed_pct)
                            .unwrap_or_else(|| "from 0".into())
                    )
                })
                .collect();
            if e.moved.len() > most {
                lines.push(format!("{} more moved", e.moved.len() - most));
            }
            if !e.also_joined.is_empty() {
                lines.push(format!(
                    "{} more kernel(s) joined too, none whose own duration moved with the row: {}",
                    e.also_joined.len(),
                    shortened(&e.also_joined, 3)
                ));
            }
            lines.push(if e.moved.is_empty() {
                format!(
                    "no counter moved by {:.0}% or more ({} compared)",
                    MOVED * 100.0,
                    e.unchanged
                )
            } else {
                format!("{} other counter(s) unchanged", e.unchanged)
            });
            (head, lines)
        })
        .collect()
}

/// How far a counter moved, for ordering: |log(head/base)|, a counter from 0 first.
fn size(m: &CounterMove) -> f64 {
    match m.change {
        Some(c) if c > -1.0 => (1.0 + c).ln().abs(),
        _ => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::join::words;
    use super::reading::{about, About};
    use super::*;
    use perfdb_ingest::model::SeriesKey;

    fn mv(name: &str, unit: &str, change: f64) -> CounterMove {
        CounterMove {
            name: name.into(),
            place: String::new(),
            unit: unit.into(),
            base: 100.0,
            head: 100.0 * (1.0 + change),
            change: Some(change),
        }
    }

    #[test]
    fn names_join_by_a_word_that_is_no_type_or_common_word() {
        assert!(words("void addition_kernel<float>(float*, int)").contains("addition"));
        assert!(!words("void addition_kernel<float>(float*, int)").contains("float"));
        assert_eq!(words("add_kernel"), ["add".to_string()].into());
        assert!(words("n=1048576 x").is_empty());
        for t in [
            "bfloat16", "float16", "fp8e4m3", "int8", "uint32", "bf16", "tflops",
        ] {
            let w = words(&format!("softmax<{t}>"));
            assert!(w.contains("softmax") && !w.contains(t), "{t}: {w:?}");
        }
        assert!(words("interpolate").contains("interpolate"));
    }

    fn kernel(name: &str, marks: &[&str], duration: (f64, f64)) -> ((String, String), Profiled) {
        let mut diffs = Diffs::new();
        diffs.insert(("Duration".into(), String::new(), "ns".into()), duration);
        (
            ("ncu".into(), name.into()),
            Profiled {
                diffs,
                marks: marks.iter().map(|m| m.to_string()).collect(),
            },
        )
    }

    fn row<'a>(table: &'a str, variant: &'a str, key_text: &'a str) -> Changed<'a> {
        Changed {
            table,
            variant,
            key_text,
            metric: "latency",
            change: Some(0.19),
        }
    }

    #[test]
    fn a_key_joins_no_kernel_a_table_a_range_and_a_name_do() {
        let ks: BTreeMap<_, _> = [
            kernel("void at::softmax<c10::BFloat16>", &[], (10.0, 10.0)),
            kernel("dim_reduce_kernel", &[], (10.0, 10.0)),
            kernel("add_kernel", &[], (10.0, 12.0)),
            kernel("matmul_kernel", &["triton"], (10.0, 13.0)),
        ]
        .into_iter()
        .collect();
        // A dtype value and a key's column name join nothing.
        let r = row("perf", "ck", "dim=(4096,), dtype=torch.bfloat16");
        assert!(join(&r, &ks, &[]).is_empty());
        // The table names the kernel.
        let r = row("add", "ck", "dim=(4096,)");
        let j = join(&r, &ks, &[]);
        assert_eq!(j.len(), 1);
        assert_eq!(
            (j[0].0 .1.as_str(), j[0].1.as_str()),
            ("add_kernel", "the name (add)")
        );
        // An NVTX range named for the variant.
        let r = row("perf", "triton", "M=2048");
        let j = join(&r, &ks, &[]);
        assert_eq!(j.len(), 1);
        assert_eq!(j[0].0 .1, "matmul_kernel");
        assert!(j[0].1.contains("NVTX"), "{}", j[0].1);
    }

    #[test]
    fn the_kernel_whose_duration_moved_leads_the_rest_are_one_line() {
        let mut base = Counters::new();
        let mut head = Counters::new();
        for (k, b, h) in [
            ("add_kernel", 100.0, 120.0),
            (
                "vectorized_elementwise_kernel<CUDAFunctor_add<c10::BFloat16>>",
                50.0,
                50.5,
            ),
            ("elementwise_add_bias", 70.0, 69.0),
        ] {
            let id = SeriesKey {
                table: "ncu".into(),
                variant: k.into(),
                key: r#"{"section":"GPU Speed Of Light Throughput"}"#.into(),
                metric: "Duration".into(),
                unit: "ns".into(),
            };
            base.insert(id.clone(), vec![b]);
            head.insert(id, vec![h]);
        }
        let (out, notes) = explain_changed(&[row("add", "triton", "n=1")], &base, &head, &[]);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].kernel, "add_kernel");
        assert_eq!(out[0].also_joined.len(), 2);
        let printed = lines(&out, 8);
        assert!(
            printed[0]
                .1
                .iter()
                .any(|l| l.starts_with("2 more kernel(s) joined too, none")),
            "{printed:?}"
        );
        // None moved: one note, no reading.
        let mut flat = head.clone();
        for (id, v) in flat.iter_mut() {
            *v = base[id].clone();
        }
        let (out, notes) = explain_changed(&[row("add", "triton", "n=1")], &base, &flat, &[]);
        assert!(out.is_empty());
        assert!(notes[0].contains("3 kernel(s) joined"), "{notes:?}");
    }

    #[test]
    fn a_smaller_tile_reads_as_compute_falling_with_dram_traffic_unchanged() {
        let mut all = Diffs::new();
        all.insert(
            ("dram__bytes_read.sum".into(), String::new(), "byte".into()),
            (1.6e7, 1.61e7),
        );
        // The few writes that grew (H100, tile 128 -> 64) do not outvote the reads.
        all.insert(
            ("dram__bytes_write.sum".into(), String::new(), "byte".into()),
            (6e5, 1.05e6),
        );
        let moved = vec![
            mv("Compute (SM) Throughput", "%", -0.35),
            mv("dram__bytes_write.sum", "byte", 0.75),
            mv("Block Limit Registers", "", 2.5),
        ];
        assert_eq!(
            reading(&moved, &all).as_deref(),
            Some("its compute throughput fell (-35%), DRAM traffic unchanged")
        );
    }

    #[test]
    fn counters_read_as_what_they_are_about() {
        assert_eq!(about("dram__bytes_read.sum", "byte"), About::Traffic);
        assert_eq!(about("DRAM Throughput", "%"), About::Other);
        assert_eq!(about("dram__bytes_write.sum", "byte"), About::Traffic);
        assert_eq!(about("FETCH_SIZE", ""), About::Traffic);
        assert_eq!(about("bytes", "byte"), About::Traffic);
        assert_eq!(about("Achieved Occupancy", "%"), About::Occupancy);
        assert_eq!(
            about("Registers Per Thread", "register/thread"),
            About::Registers
        );
        assert_eq!(about("Grid Size", ""), About::Launch);
        assert_eq!(about("flops16", ""), About::Work);
        assert_eq!(about("Compute (SM) Throughput", "%"), About::Compute);
        assert_eq!(about("Elapsed Cycles", ""), About::Other);
        assert_eq!(
            about("Shared Memory Configuration Size", "byte"),
            About::Other
        );
        assert_eq!(about("Block Limit Registers", "block"), About::Other);
    }

    #[test]
    fn a_padded_kernel_reads_as_moving_more_data_with_compute_unchanged() {
        let moved = vec![
            mv("dram__bytes_read.sum", "byte", 0.2),
            mv("Grid Size", "", 0.2),
        ];
        let mut all = Diffs::new();
        all.insert(
            (
                "sm__throughput.avg.pct_of_peak_sustained_elapsed".into(),
                String::new(),
                "%".into(),
            ),
            (50.0, 50.5),
        );
        all.insert(
            ("dram__bytes_read.sum".into(), String::new(), "byte".into()),
            (100.0, 120.0),
        );
        assert_eq!(
            reading(&moved, &all).as_deref(),
            Some("the kernel moves more data (+20%), its launch grew (+20%), compute unchanged")
        );
        assert_eq!(
            reading(&[mv("Elapsed Cycles", "", 0.3)], &Diffs::new()),
            None
        );
    }
}
