//! Step 5: the hardware counters that moved with the rows. A profiled trial's counters
//! (tables `ncu`, `rocprofv3`, `proton`: ingest's `formats::counters`) are never judged:
//! here each kernel's counters are diffed base against head, and the kernels are joined
//! to the rows that changed — by `--kernel ROW=KERNEL`, else by a word of the kernel's
//! name that names the row (`add_kernel` joins `add triton n=...`), else as the only
//! kernel profiled on both sides. A launch that grew with the change (a padded buffer
//! grows the grid) is a counter that moved, never a new kernel: the grid is no part of
//! a kernel's identity.

pub(crate) use super::load::Counters;
use super::load::RowId;
use super::{CompareError, Options, Report, Row, SideInfo, Verdict};
use crate::db::{sql_str, Db};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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

/// The kernels profiled on both sides, each with its counters' medians.
fn kernels(base: &Counters, head: &Counters) -> BTreeMap<(String, String), Diffs> {
    let mut out: BTreeMap<(String, String), Diffs> = BTreeMap::new();
    for (id, hv) in head {
        let Some(bv) = base.get(id) else { continue };
        let (Some(b), Some(h)) = (median(bv), median(hv)) else {
            continue;
        };
        let place = place_of(&id.key);
        out.entry((id.table.clone(), id.variant.clone()))
            .or_default()
            .insert((id.metric.clone(), place, id.unit.clone()), (b, h));
    }
    out
}

fn median(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// The values of a counter's key (`{"section":"Memory Workload Analysis"}`), joined.
fn place_of(key: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(key) {
        Ok(serde_json::Value::Object(m)) => m
            .values()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" / "),
        _ => String::new(),
    }
}

/// Words of a name that can tell what it is: lower case, letters and digits, three
/// characters or more, not a C type or a word every kernel carries.
fn words(text: &str) -> BTreeSet<String> {
    const COMMON: [&str; 20] = [
        "kernel", "void", "float", "int", "const", "unsigned", "half", "char", "bool", "double",
        "long", "struct", "std", "native", "detail", "impl", "the", "and", "triton", "cuda",
    ];
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect()
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

/// The kernel(s) that explain `row`, and how they were joined.
fn join<'a>(
    row: &Changed,
    kernels: &'a BTreeMap<(String, String), Diffs>,
    asked_joins: &[(String, String)],
) -> Vec<(&'a (String, String), String)> {
    let text = format!("{} {} {}", row.table, row.variant, row.key_text);
    let asked: Vec<_> = kernels
        .keys()
        .filter_map(|k| {
            asked_joins
                .iter()
                .find(|(r, kn)| text.contains(r.as_str()) && k.1.contains(kn.as_str()))
                .map(|(r, kn)| (k, format!("--kernel {r}={kn}")))
        })
        .collect();
    if !asked.is_empty() || asked_joins.iter().any(|(r, _)| text.contains(r.as_str())) {
        return asked;
    }
    let row_words = words(&text);
    let by_name: Vec<_> = kernels
        .keys()
        .filter_map(|k| {
            let shared: Vec<String> = words(&k.1).intersection(&row_words).cloned().collect();
            (!shared.is_empty()).then(|| (k, format!("the name ({})", shared.join(", "))))
        })
        .collect();
    if !by_name.is_empty() {
        return by_name;
    }
    let names: BTreeSet<&String> = kernels.keys().map(|k| &k.1).collect();
    if names.len() == 1 {
        return kernels
            .keys()
            .map(|k| (k, "the only kernel profiled".to_string()))
            .collect();
    }
    Vec::new()
}

/// The counters of every changed row's kernels, and a note when kernels were profiled
/// that no changed row could be joined to.
pub(crate) fn explain(
    rows: &[Row],
    base: &Counters,
    head: &Counters,
    opt: &Options,
) -> (Vec<Explained>, Option<String>) {
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
) -> (Vec<Explained>, Option<String>) {
    let kernels = kernels(base, head);
    if kernels.is_empty() {
        return (Vec::new(), None);
    }
    let mut out = Vec::new();
    let mut unjoined = 0;
    for row in changed {
        let joined = join(row, &kernels, asked_joins);
        if joined.is_empty() {
            unjoined += 1;
        }
        for ((profiler, kernel), how) in joined {
            let diffs = &kernels[&(profiler.clone(), kernel.clone())];
            out.push(moved_counters(row, profiler, kernel, how, diffs));
        }
    }
    let note = (unjoined > 0).then(|| {
        format!(
            "{} kernel(s) were profiled on both sides, but {unjoined} changed row(s) name none \
             of them: join them with --kernel ROW=KERNEL",
            kernels.len()
        )
    });
    (out, note)
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
    let (explained, unjoined) = explain(rows, &counters[0], &counters[1], opt);
    warnings.extend(unjoined);
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
    let (explained, note) = explain(&report.rows, &base, &head, &report.options);
    report.counters = explained;
    report.warnings.extend(note);
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
    let tables: Vec<String> = perfdb_ingest::formats::counters::TABLES
        .iter()
        .map(|t| sql_str(t))
        .collect();
    let commits = if commits.is_empty() {
        String::new()
    } else {
        format!(
            " AND m.run_id IN (SELECT run_id FROM runs WHERE \"commit\" IN ({}))",
            list(commits)
        )
    };
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.metric, m.unit, list(m.value) \
         FROM measurements m WHERE m.label IN ({}) AND m.table_name IN ({}) \
         AND m.value IS NOT NULL{commits} GROUP BY 1, 2, 3, 4, 5",
        list(labels),
        tables.join(", ")
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        let values = crate::db::list_f64(r.get(5)?);
        Ok((
            RowId {
                table: r.get(0)?,
                variant: r.get(1)?,
                key: r.get(2)?,
                metric: r.get(3)?,
                unit: r.get(4)?,
            },
            values,
        ))
    })?;
    let mut out = Counters::new();
    for row in rows {
        let (id, v) = row?;
        out.insert(id, v);
    }
    Ok(out)
}

/// The counters that moved with each changed row, as every report prints them: a line a row
/// and kernel (the row, its change, the kernel, how it was joined, what the moves say),
/// then its counters, largest move first, at most `most` of them.
pub fn lines(counters: &[Explained], most: usize) -> Vec<(String, Vec<String>)> {
    counters
        .iter()
        .map(|e| {
            let head = format!(
                "{} {} {} {} {}: {} ({}, joined by {}){}",
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

/// What a counter is about, told by its name and unit (ncu, rocprofv3 and proton
/// spell them differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum About {
    /// Bytes moved to and from device memory.
    Traffic,
    /// Arithmetic: flops, instructions, the SM's throughput.
    Compute,
    Occupancy,
    Registers,
    /// The launch: grid and block.
    Launch,
    Other,
}

fn about(name: &str, unit: &str) -> About {
    let n = name.to_ascii_lowercase();
    let has = |w: &str| n.contains(w);
    if has("occupancy") || has("warps_active") || has("active warps") {
        About::Occupancy
    } else if has("register") || has("vgpr") || has("sgpr") || has("spill") || has("scratch") {
        About::Registers
    } else if matches!(
        n.as_str(),
        "grid size" | "block size" | "grid_size" | "workgroup_size" | "threads"
    ) {
        About::Launch
    } else if (unit == "byte" || unit == "byte/s" || has("bytes"))
        && (has("dram") || n == "bytes" || has("fetch_size") || has("write_size"))
        || has("fetch_size")
        || has("write_size")
        || has("dram throughput")
        || has("memory throughput")
    {
        About::Traffic
    } else if has("flop")
        || has("inst_executed")
        || has("compute (sm)")
        || has("sm__throughput")
        || has("valu")
    {
        About::Compute
    } else {
        About::Other
    }
}

/// The moves read together: more or less data, lost occupancy, more registers, a grown
/// launch; compute said unchanged when it was profiled and did not move.
fn reading(moved: &[CounterMove], all: &Diffs) -> Option<String> {
    let largest = |a: About| {
        moved
            .iter()
            .filter(|m| about(&m.name, &m.unit) == a)
            .filter_map(|m| m.change)
            .max_by(|x, y| x.abs().total_cmp(&y.abs()))
    };
    let mut said = Vec::new();
    match largest(About::Traffic) {
        Some(c) if c > 0.0 => said.push("the kernel moves more data".to_string()),
        Some(_) => said.push("the kernel moves less data".to_string()),
        None => {}
    }
    if let Some(c) = largest(About::Occupancy) {
        said.push(
            if c < 0.0 {
                "it lost occupancy"
            } else {
                "it gained occupancy"
            }
            .to_string(),
        );
    }
    if largest(About::Registers).is_some_and(|c| c > 0.0) {
        said.push("it uses more registers or scratch".to_string());
    }
    if let Some(c) = largest(About::Launch) {
        said.push(format!(
            "its launch {} ({:+.0}%)",
            if c > 0.0 { "grew" } else { "shrank" },
            c * 100.0
        ));
    }
    if said.is_empty() {
        return None;
    }
    let compute_profiled = all.keys().any(|(n, _, u)| about(n, u) == About::Compute);
    if compute_profiled && largest(About::Compute).is_none() {
        said.push("compute unchanged".to_string());
    }
    Some(said.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn counters_read_as_what_they_are_about() {
        assert_eq!(about("dram__bytes_read.sum", "byte"), About::Traffic);
        assert_eq!(about("DRAM Throughput", "%"), About::Traffic);
        assert_eq!(about("FETCH_SIZE", ""), About::Traffic);
        assert_eq!(about("bytes", "byte"), About::Traffic);
        assert_eq!(about("Achieved Occupancy", "%"), About::Occupancy);
        assert_eq!(
            about("Registers Per Thread", "register/thread"),
            About::Registers
        );
        assert_eq!(about("Grid Size", ""), About::Launch);
        assert_eq!(about("flops16", ""), About::Compute);
        assert_eq!(about("Compute (SM) Throughput", "%"), About::Compute);
        assert_eq!(about("Elapsed Cycles", ""), About::Other);
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
        assert_eq!(
            reading(&moved, &all).as_deref(),
            Some("the kernel moves more data, its launch grew (+20%), compute unchanged")
        );
        assert_eq!(reading(&[mv("Elapsed Cycles", "", 0.3)], &all), None);
    }
}
