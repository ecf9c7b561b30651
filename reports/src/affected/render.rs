//! What `perfdb run --affected` says: each row timed and why, with its verdict against
//! the run its base result came from; each row not timed and the run it is filled
//! from; the GPU-seconds spent and saved.

use super::{Action, Plan, Why};
use perfdb_ingest::kernel_identity::launches::Choice;
use serde::Serialize;
use std::fmt::Write;

/// A timed row's verdict against the run its base result came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    /// The row's name ([`RowIdentity::name`](perfdb_ingest::kernel_identity::rows::RowIdentity::name)).
    pub row: String,
    pub against: String,
    /// compare's verdict (`regression`, `no significant change`, ...), or why there is none.
    pub verdict: String,
    /// Direction-normalised relative change (> 0 is worse).
    pub change: Option<f64>,
    /// Whether the verdict moves past the threshold (regression or improvement).
    pub moved: bool,
}

/// How often each config won a kernel's tuning over recent identity passes (every key it
/// tuned, each pass's choice counted once).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub kernel: String,
    /// Identity passes read (this one included).
    pub passes: usize,
    /// Each winner and how often it won, most first.
    pub winners: Vec<(String, usize)>,
}

/// The winners of `kernel`'s autotuner over `passes` (each pass's autotune choices).
pub fn spread(kernel: &str, passes: &[&[Choice]]) -> Spread {
    let mut n: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for choices in passes {
        for c in choices.iter().filter(|c| c.kernel == kernel) {
            *n.entry(&c.winner).or_default() += 1;
        }
    }
    let mut winners: Vec<(String, usize)> =
        n.into_iter().map(|(w, k)| (w.to_string(), k)).collect();
    winners.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Spread {
        kernel: kernel.to_string(),
        passes: passes.len(),
        winners,
    }
}

/// Everything one `run --affected` did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The base selector; none under `--identity`.
    pub base: Option<String>,
    /// Where the timed rows' results are: `LABEL@COMMIT`, or `run:ID` of a run without a
    /// commit; none when no row was timed.
    pub head: Option<String>,
    /// The runs stored, one a trial of the timed pass.
    pub head_runs: Vec<String>,
    pub plan: Plan,
    pub judged: Vec<Judged>,
    /// Rows the benchmark timed without being asked (it does not read PERFDB_AFFECTED).
    pub unasked: Vec<String>,
    /// Rows asked for that the timed pass did not print.
    pub missing: Vec<String>,
    /// Wall seconds of the identity pass and of the timed passes, all trials (none when
    /// nothing was timed): one GPU held for each.
    pub identity_seconds: f64,
    pub timed_seconds: Option<f64>,
    /// Seconds a row took in the run it is filled from, and the seconds not spent: an
    /// estimate (the rows not timed at that rate).
    pub row_seconds: Option<f64>,
    pub saved_seconds: Option<f64>,
    /// For each kernel whose autotuner's choice drifted: the winners over the label's
    /// recent identity passes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<Spread>,
    /// The base's rows (their runs), not part of the report.
    #[serde(skip)]
    pub base_rows: Vec<perfdb_ingest::kernel_identity::rows::RowIdentity>,
}

impl Outcome {
    /// Audited rows that moved past the threshold: their identity did not see a change.
    pub fn leaks(&self) -> Vec<(&Judged, &str)> {
        self.plan
            .rows
            .iter()
            .filter_map(|p| match &p.action {
                Action::Time(Why::Audit { identity, .. }) => self
                    .judged
                    .iter()
                    .find(|j| j.row == p.row.name() && j.moved)
                    .map(|j| (j, identity.as_str())),
                _ => None,
            })
            .collect()
    }
    /// The run the base row's result came from.
    pub fn base_measured_in(
        &self,
        row: &perfdb_ingest::kernel_identity::rows::RowIdentity,
    ) -> Option<String> {
        self.base_rows
            .iter()
            .find(|r| r.same_row(row))
            .and_then(|r| r.measured_in.clone())
    }
    /// Timed rows whose move is a config drift, not a code change.
    pub fn drifted(&self, row: &str) -> bool {
        self.plan.rows.iter().any(|p| {
            p.row.name() == row && matches!(p.action, Action::Time(Why::ConfigDrift { .. }))
        })
    }
}

fn why_text(w: &Why) -> String {
    match w {
        Why::Forced => "every row timed".to_string(),
        Why::Changed { kernels } if kernels.is_empty() => "changed".to_string(),
        Why::Changed { kernels } => format!("changed: {}", kernels.join(", ")),
        Why::ConfigDrift { kernel, from, to } => {
            format!("config drift: {kernel} winner {from} -> {to}, same code")
        }
        Why::ConfigSetChanged { kernel } => format!("config set changed: {kernel}"),
        Why::New => "new row".to_string(),
        Why::NoIdentity => "no identity (no Triton kernel seen)".to_string(),
        Why::BaseUnmeasured => "the base row names no run to fill from".to_string(),
        Why::Audit { run, identity } => {
            format!("audit: identity {identity} equal to run {run}")
        }
    }
}

/// The report's first lines: what ran, and why every row was timed when it was.
fn header(s: &mut String, o: &Outcome, timed: usize, skipped: usize) {
    let mode = o
        .base
        .as_ref()
        .map_or_else(|| "--identity".to_string(), |b| format!("--affected {b}"));
    match (&o.plan.forced, o.plan.rows.is_empty()) {
        // No identities at all: the rows are the timed pass's, not listed here.
        (Some(f), true) => {
            let _ = writeln!(
                s,
                "perfdb run {mode}: every row timed, no identity recorded: {f}"
            );
        }
        (forced, _) => {
            let _ = writeln!(
                s,
                "perfdb run {mode}: {} row(s), {timed} timed, {skipped} not timed",
                o.plan.rows.len()
            );
            if let Some(f) = forced {
                let _ = writeln!(s, "every row timed: {f}");
            }
        }
    }
}

/// The text report.
pub fn text(o: &Outcome) -> String {
    let mut s = String::new();
    let timed = o.plan.timed().count();
    let skipped = o.plan.skipped().count();
    header(&mut s, o, timed, skipped);
    if timed > 0 {
        let _ = writeln!(s, "\ntimed:");
        for p in o.plan.timed() {
            let Action::Time(why) = &p.action else {
                continue;
            };
            let name = p.row.name();
            let verdict = match o.judged.iter().find(|j| j.row == name) {
                Some(j) => {
                    let change = j
                        .change
                        .map_or(String::new(), |c| format!(" {:+.1}%", c * 100.0));
                    let drift = if o.drifted(&name) && j.moved {
                        " (the autotuner's choice, not the code)"
                    } else {
                        ""
                    };
                    format!("{}{change} against {}{drift}", j.verdict, j.against)
                }
                None if o.missing.contains(&name) => "MISSING: asked for, not printed".to_string(),
                None => "not judged (no base result for it)".to_string(),
            };
            let _ = writeln!(s, "  {name}  [{}]  {verdict}", why_text(why));
        }
    }
    if skipped > 0 {
        let _ = writeln!(s, "\nnot timed:");
        for p in o.plan.skipped() {
            let _ = match &p.action {
                Action::Skip { run, identity } => writeln!(
                    s,
                    "  {}  unchanged: identity {identity} equal to {run}",
                    p.row.name()
                ),
                Action::Drift {
                    run,
                    kernel,
                    from,
                    to,
                } => writeln!(
                    s,
                    "  {}  config drift: {kernel} winner {from} -> {to}, same code (filled from {run})",
                    p.row.name()
                ),
                Action::Time(_) => Ok(()),
            };
        }
    }
    for sp in &o.spread {
        let won: Vec<String> = sp
            .winners
            .iter()
            .map(|(w, n)| format!("{w} x{n}"))
            .collect();
        let _ = writeln!(
            s,
            "\nthe autotuner's winners for {} over the last {} identity pass(es), every key it tuned: {}",
            sp.kernel,
            sp.passes,
            won.join("; ")
        );
    }
    if !o.unasked.is_empty() {
        let _ = writeln!(
            s,
            "\nthe benchmark timed {} row(s) it was not asked for (it selects coarser than rows, or not at all): stored as measured",
            o.unasked.len()
        );
    }
    for (j, identity) in o.leaks() {
        let _ = writeln!(
            s,
            "\nIDENTITY LEAK: {} moved ({}) with identity {identity} equal to {}: a change the identity did not see, or a row that moves between processes of the same code (re-time both commits to tell)",
            j.row, j.verdict, j.against
        );
    }
    let timed_s = o.timed_seconds.unwrap_or(0.0);
    let _ = write!(
        s,
        "\nGPU-seconds: {:.1} identity pass + {:.1} timed = {:.1} spent",
        o.identity_seconds,
        timed_s,
        o.identity_seconds + timed_s
    );
    match (o.saved_seconds, o.row_seconds) {
        (Some(saved), Some(per)) if skipped > 0 => {
            let _ = writeln!(
                s,
                "; about {saved:.1} saved ({skipped} row(s) at {per:.2} s a row)"
            );
        }
        _ => {
            let _ = writeln!(s);
        }
    }
    s
}
