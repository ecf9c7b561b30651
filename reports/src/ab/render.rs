//! The run's section of `perfdb ab`'s report (after `compare`'s), as text and markdown,
//! and the progress line printed after each block.

use super::{undecided, Sequential, Stopped};
use crate::compare::{Report, State};
use crate::fmt::{human_seconds as human, signed_pct as pct};

/// Where a run stands after a block: trials, rows decided, the first undecided ones,
/// the time left at most.
pub fn progress(n: usize, max: usize, last: Option<&Report>, mean_trial: f64) -> String {
    let mut line = format!("ab: {n} base / {n} head trial(s) of at most {max}");
    if let Some(r) = last {
        let (done, all) = super::decided_count(r);
        line.push_str(&format!("; {done} of {all} row(s) decided"));
        let open = undecided(r);
        for u in open.iter().take(3) {
            let ci = u
                .ratio_ci
                .map(|(a, b)| format!(" [{}, {}]", pct(a - 1.0), pct(b - 1.0)))
                .unwrap_or_default();
            line.push_str(&format!(
                "; {} {} {} {}{ci}",
                u.variant,
                u.key_display(),
                u.metric,
                u.ratio.map(|x| pct(x - 1.0)).unwrap_or_default()
            ));
        }
        if open.len() > 3 {
            line.push_str(&format!("; {} more undecided", open.len() - 3));
        }
    }
    let left = 2.0 * max.saturating_sub(n) as f64 * mean_trial;
    if left > 0.0 {
        line.push_str(&format!("; at most ~{} left", human(left)));
    }
    line
}

fn stopped_text(s: &Sequential) -> String {
    match s.course.stopped {
        Stopped::Decided => "every row decided".to_string(),
        Stopped::MaxTrials => format!("--max-trials {} reached", s.course.trials_per_arm),
        Stopped::MaxTime => match &s.course.cut_trial {
            Some(cut) => format!("the --max-time budget; {cut}"),
            None => "the --max-time budget".to_string(),
        },
        Stopped::Unreliable => "the control moved (more trials do not cure drift)".to_string(),
        Stopped::FailedRun => match &s.course.failed {
            Some((arm, log)) => format!("a {} trial failed ({log})", arm.name()),
            None => "a trial failed".to_string(),
        },
        Stopped::TrialTimeout | Stopped::Interrupted => s
            .course
            .cut_trial
            .clone()
            .unwrap_or_else(|| "a trial was stopped".to_string()),
    }
}

/// Seconds of one more trial a side at this run's pace (both arms' trials, warm-ups
/// and looks included); None before any trial.
fn pace(s: &Sequential) -> Option<f64> {
    (s.course.trials_per_arm > 0 && s.facts.seconds > 0.0)
        .then(|| s.facts.seconds / s.course.trials_per_arm as f64)
}

/// What the rows the noise left open would need: the most trials a side any asks
/// for, the time that takes at this run's pace, and the flag that allows it.
fn open_advice(s: &Sequential, report: &Report) -> Option<String> {
    let open: Vec<&crate::compare::Row> = report
        .rows
        .iter()
        .filter(|r| !r.control && matches!(r.state, Some(State::Undecided | State::Undecidable)))
        .collect();
    if open.is_empty() || s.course.stopped == Stopped::Unreliable {
        return None;
    }
    let most = open.iter().filter_map(|r| r.trials_needed).max();
    let n = s.course.trials_per_arm;
    let when = match (most, pace(s)) {
        (Some(k), Some(secs)) if k > n => format!(
            "the widest needs ~{k} trials a side, about {} more at this run's pace (--max-trials {k}{})",
            human(secs * (k - n) as f64),
            match s.course.stopped {
                Stopped::MaxTime => ", and a larger --max-time",
                _ => "",
            }
        ),
        (Some(k), _) => format!("the widest needs ~{k} trials a side"),
        (None, _) => "no number of trials separates their estimates from the threshold".to_string(),
    };
    Some(format!(
        "{} row(s) not decided at the noise measured ({when}); a row whose estimate sits on \
         the threshold, or a kernel at the timer's noise floor, stays open however long it \
         runs: compare it with a larger threshold, or time it longer per trial",
        open.len()
    ))
}

fn state_rows(report: &Report) -> Vec<[String; 5]> {
    report
        .rows
        .iter()
        .filter(|r| !r.control)
        .filter_map(|r| {
            let state = r.state?;
            Some([
                state.as_str().to_string(),
                format!("{} {} {} {}", r.table, r.variant, r.key_display(), r.metric),
                r.ratio.map(|x| pct(x - 1.0)).unwrap_or_default(),
                r.ratio_ci
                    .map(|(a, b)| format!("[{}, {}]", pct(a - 1.0), pct(b - 1.0)))
                    .unwrap_or_default(),
                r.trials_needed
                    .filter(|_| matches!(state, State::Undecided | State::Undecidable))
                    .map(|k| format!("~{k} a side"))
                    .unwrap_or_default(),
            ])
        })
        .collect()
}

fn summary_line(s: &Sequential) -> String {
    let looks: Vec<String> = s.course.looks.iter().map(|n| n.to_string()).collect();
    let planned: Vec<String> = s
        .course
        .planned_looks
        .iter()
        .map(|n| n.to_string())
        .collect();
    // A dropped GPU's trials ran and count towards the run, but no look compares them.
    let dropped: usize = s
        .facts
        .gpus
        .iter()
        .filter(|g| g.dropped.is_some())
        .map(|g| 2 * g.blocks)
        .sum();
    let compared = match dropped {
        0 => String::new(),
        d => format!(
            " ({} compared, {d} of dropped GPUs not)",
            s.course.trials_per_arm.saturating_sub(d)
        ),
    };
    format!(
        "stopped at {} trial(s) a side{compared}: {}; looks at {} of {}; seed {}; {} block(s) {}; {}",
        s.course.trials_per_arm,
        stopped_text(s),
        if looks.is_empty() {
            "none".to_string()
        } else {
            looks.join(", ")
        },
        planned.join(", "),
        s.seed,
        s.course.blocks.len(),
        s.course.blocks.join(" "),
        human(s.facts.seconds)
    )
}

/// The GPUs the blocks ran on (`--gpus`), a line each: blocks, median offset over the
/// rows, and why a GPU's blocks were dropped.
pub fn gpu_lines(s: &Sequential) -> Vec<String> {
    if s.facts.gpus.len() < 2 {
        return Vec::new();
    }
    s.facts
        .gpus
        .iter()
        .map(|g| {
            let offset = match g.median_offset {
                Some(o) => format!("offset {} (median over the rows)", pct(o)),
                None => "no offset".to_string(),
            };
            match &g.dropped {
                Some(why) => format!(
                    "GPU {} ({}): DROPPED, {why}; its {} block(s) are not compared",
                    g.gpu, g.visible, g.blocks
                ),
                None => format!(
                    "GPU {} ({}): {} block(s), {offset}",
                    g.gpu, g.visible, g.blocks
                ),
            }
        })
        .collect()
}

/// The section as text, after the terminal report.
pub fn text(s: &Sequential, report: &Report) -> String {
    let mut out = format!("\nab: {}\n", summary_line(s));
    out.push_str(&format!(
        "ab: labels {} and {}; trial outputs in {}\n",
        s.facts.labels[0], s.facts.labels[1], s.facts.logs
    ));
    for line in gpu_lines(s) {
        out.push_str(&format!("ab: {line}\n"));
    }
    let rows: Vec<Vec<String>> = state_rows(report)
        .into_iter()
        .map(|r| {
            let mut v = vec![String::new()];
            v.extend(r);
            v
        })
        .collect();
    out.push_str(&crate::query::table::aligned(&[], &rows));
    if let Some(advice) = open_advice(s, report) {
        out.push_str(&format!("ab: {advice}\n"));
    }
    out
}

/// The section as markdown, after the markdown report.
pub fn markdown(s: &Sequential, report: &Report) -> String {
    let mut out = format!(
        "\n### Sequential A/B\n\n{}.\nLabels `{}` and `{}`; trial outputs in `{}`.\n\n",
        summary_line(s),
        s.facts.labels[0],
        s.facts.labels[1],
        s.facts.logs
    );
    for line in gpu_lines(s) {
        out.push_str(&format!("- {line}\n"));
    }
    let rows = state_rows(report);
    if !rows.is_empty() {
        out.push_str("| state | row | change | 95% CI | trials needed |\n|---|---|---:|---|---|\n");
        for r in rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r[0], r[1], r[2], r[3], r[4]
            ));
        }
    }
    if let Some(advice) = open_advice(s, report) {
        out.push_str(&format!("\n{advice}.\n"));
    }
    out
}

/// `perfdb ab --format json`: the comparison at the run's last look, with the run's
/// course as `sequential`.
#[derive(serde::Serialize)]
pub struct AbJson<'a> {
    #[serde(flatten)]
    pub report: &'a Report,
    pub sequential: &'a Sequential,
}

/// The run as JSON ([`AbJson`]).
pub fn json(s: &Sequential, report: &Report) -> String {
    crate::json::pretty(&AbJson {
        report,
        sequential: s,
    })
}
