//! Output compatible with aiter validate-kernel-pr's perf stage (its
//! `scrape_perf` report), for consumers of that stage: best-of-N per side, per-column median of
//! head-over-base speedups, the minimum over columns against a 0.95 threshold, at least 3
//! matched rows, the worst rows of the worst column.
//!
//! Where that stage is wrong perfdb is right, and says so in the same fields:
//! - rows match on the strict key (derived columns are never identity), so
//!   `row_key_basis` is always the full key;
//! - `torch_avg:` lines are parsed;
//! - every row is judged by perfdb's own comparison: `perfdb_verdict` carries it, and
//!   `status` is `regression` when either the stage's rule or perfdb's per-row rule
//!   finds one (the stage's median hides a few slow rows among many unchanged ones).

use crate::compare::{Overall, Report, Row, Verdict};
use perfdb_ingest::model::Direction;
use serde_json::{json, Map, Value};

/// validate-kernel-pr's speedup threshold: head/base speedup below this is a regression.
pub const VKPR_THRESHOLD: f64 = 0.95;
/// validate-kernel-pr's minimum number of matched rows for a column to be eligible.
pub const VKPR_MIN_ROWS: usize = 3;
/// How many of the worst rows validate-kernel-pr lists.
pub const VKPR_WORST_ROWS: usize = 5;

fn column_of(r: &Row) -> String {
    if r.variant == perfdb_ingest::model::DEFAULT_VARIANT {
        r.unit.clone()
    } else {
        format!("{} {}", r.variant, r.unit)
    }
}

fn row_text(r: &Row) -> String {
    r.key
        .iter()
        .map(|(k, v)| {
            if k == "row" {
                v.clone()
            } else {
                format!("{k}: {v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Speedup of head over base, oriented so > 1 is faster.
fn speedup(r: &Row) -> Option<f64> {
    let (b, h) = (r.base.best?, r.head.best?);
    Some(match r.direction {
        Direction::Higher => h / b,
        _ => b / h,
    })
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

pub fn render(report: &Report) -> String {
    let perf_rows: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.direction != Direction::None && speedup(r).is_some())
        .collect();
    let mut columns: Vec<(String, Vec<(&Row, f64)>)> = Vec::new();
    for r in &perf_rows {
        let c = column_of(r);
        let s = speedup(r).expect("filtered");
        match columns.iter_mut().find(|(n, _)| *n == c) {
            Some((_, v)) => v.push((r, s)),
            None => columns.push((c, vec![(r, s)])),
        }
    }
    let mut cols_json = Map::new();
    let mut worst: Option<(String, f64)> = None;
    for (name, rows) in &columns {
        let ratios: Vec<f64> = rows.iter().map(|(_, s)| *s).collect();
        let med = crate::stats::median(&ratios);
        let eligible = ratios.len() >= VKPR_MIN_ROWS;
        cols_json.insert(
            name.clone(),
            json!({"median_ratio": round4(med), "samples": ratios.len(), "eligible": eligible}),
        );
        let is_control = rows.iter().all(|(r, _)| r.control);
        if eligible && !is_control && worst.as_ref().is_none_or(|(_, w)| med < *w) {
            worst = Some((name.clone(), med));
        }
    }
    let matched = perf_rows
        .iter()
        .map(|r| (r.table.clone(), row_text(r)))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let per_row_regressions = report.count(Verdict::Regression);
    let mut out = Map::new();
    out.insert(
        "base_rows".into(),
        json!(matched + report.only_in_base.len()),
    );
    out.insert(
        "head_rows".into(),
        json!(matched + report.only_in_head.len()),
    );
    out.insert("base_runs".into(), json!(report.base.runs.len()));
    out.insert("head_runs".into(), json!(report.head.runs.len()));
    out.insert("matched_rows".into(), json!(matched));
    out.insert(
        "row_key_basis".into(),
        json!("all key columns (derived columns such as err, ratios and speedup are never part of the key)"),
    );
    out.insert("threshold".into(), json!(VKPR_THRESHOLD));
    out.insert("min_rows".into(), json!(VKPR_MIN_ROWS));
    out.insert("columns".into(), Value::Object(cols_json));
    out.insert(
        "repeats".into(),
        json!({"base": report.base.runs.len(), "head": report.head.runs.len(),
               "reduction": "best sample per cell (min latency / max throughput)"}),
    );
    let (status, reason) = match &worst {
        None => (
            "skip",
            format!("no timing column has {VKPR_MIN_ROWS} or more matched rows"),
        ),
        Some((c, m)) if *m < VKPR_THRESHOLD => (
            "regression",
            format!("{c}: median head/base speedup {m:.3} < {VKPR_THRESHOLD} over {} matched row(s)", columns.iter().find(|x| x.0 == *c).map(|x| x.1.len()).unwrap_or(0)),
        ),
        Some((c, m)) if per_row_regressions > 0 => (
            "regression",
            format!(
                "{c}: median head/base speedup {m:.3} >= {VKPR_THRESHOLD}, but perfdb finds {per_row_regressions} row(s) regressed beyond the threshold (the median hides them)"
            ),
        ),
        Some((c, m)) => (
            "ok",
            format!("{c}: median head/base speedup {m:.3} >= {VKPR_THRESHOLD} over {} matched row(s)", columns.iter().find(|x| x.0 == *c).map(|x| x.1.len()).unwrap_or(0)),
        ),
    };
    if let Some((c, m)) = &worst {
        out.insert("worst_column".into(), json!(c));
        out.insert("median_ratio".into(), json!(round4(*m)));
    }
    out.insert("status".into(), json!(status));
    out.insert("reason".into(), json!(reason));
    let listed = worst_rows(&perf_rows, worst.as_ref(), per_row_regressions);
    out.insert("regressed_rows".into(), Value::Array(listed));
    out.insert(
        "perfdb_verdict".into(),
        json!(match report.verdict {
            Overall::Ok => "ok",
            Overall::Regression => "regression",
            Overall::Inconclusive => "inconclusive",
            Overall::Unreliable => "unreliable",
        }),
    );
    crate::json::pretty(&Value::Object(out))
}

/// The rows the report lists: perfdb's regressions first, then the worst column's
/// slowest rows, slowest first.
fn worst_rows(
    perf_rows: &[&Row],
    worst: Option<&(String, f64)>,
    per_row_regressions: usize,
) -> Vec<Value> {
    let mut regressed: Vec<(&Row, f64)> = perf_rows
        .iter()
        .filter(|r| {
            !r.control
                && (r.verdict == Verdict::Regression
                    || worst.is_some_and(|(c, _)| column_of(r) == *c))
        })
        .filter_map(|r| speedup(r).map(|s| (*r, s)))
        .filter(|(r, s)| *s < VKPR_THRESHOLD || r.verdict == Verdict::Regression)
        .collect();
    regressed.sort_by(|a, b| a.1.total_cmp(&b.1));
    let listed: Vec<Value> = regressed
        .iter()
        .take(VKPR_WORST_ROWS.max(per_row_regressions))
        .map(|(r, s)| {
            json!({
                "row": row_text(r),
                "column": column_of(r),
                "kind": if r.direction == Direction::Higher { "throughput" } else { "latency" },
                "base": r.base.best,
                "head": r.head.best,
                "ratio": round4(*s),
                "base_repeats": r.base.n,
                "head_repeats": r.head.n,
            })
        })
        .collect();
    listed
}
