//! The text of a detection: the terminal's, and a pull-request comment's.

use super::{Detection, Raised};

/// A pull-request comment body: what this run raised, then every change it found.
pub fn render_markdown(d: &Detection, raised: &Raised) -> String {
    let mut s = format!(
        "## perfdb detect: {} new alert(s) on `{}`\n\n{} series over {} commit(s); {} regression(s), {} other change(s){}.\n\n",
        raised.new_alerts.len(),
        d.label,
        d.series,
        d.commits,
        d.regressions(),
        d.events.len() - d.regressions(),
        raised.summary_tail()
    );
    if d.events.is_empty() {
        s.push_str("No change point.\n");
        return s;
    }
    s.push_str("| | kind | kernel | shape | machine | first bad | last good | moved |\n|---|---|---|---|---|---|---|---|\n");
    for (i, e) in d.events.iter().enumerate() {
        let mark = match raised.alert_of(i) {
            Some(id) if raised.new_alerts.iter().any(|n| n == id) => "**new**".to_string(),
            Some(id) => format!(
                "`{id}` {}",
                raised.status_of(i).map(|s| s.as_str()).unwrap_or("")
            ),
            None => String::new(),
        };
        let moved: Vec<String> = e
            .metrics
            .iter()
            .map(|m| format!("{} {:+.1}%", m.metric, (m.ratio - 1.0) * 100.0))
            .collect();
        s.push_str(&format!(
            "| {mark} | {} | {} {} | {} | {} | {} | {} | {} |\n",
            e.kind,
            e.table,
            e.variant,
            e.key,
            e.machine,
            e.first_bad_commit,
            e.last_good_commit,
            moved.join(", ")
        ));
    }
    s
}

/// The terminal text of a detection.
pub fn render_text(d: &Detection) -> String {
    let mut s = format!(
        "{} series over {} commit(s) of label '{}'{}: {} regression(s), {} other change(s)\n",
        d.series,
        d.commits,
        d.label,
        d.since
            .as_deref()
            .map(|c| format!(" (changes from {c} on)"))
            .unwrap_or_default(),
        d.regressions(),
        d.events.len() - d.regressions()
    );
    for e in &d.events {
        let moved: Vec<String> = e
            .metrics
            .iter()
            .map(|m| {
                format!(
                    "{} {} -> {} {} ({:+.1}%, p {:.1e})",
                    m.metric,
                    crate::render::num(m.before_median),
                    crate::render::num(m.after_median),
                    m.unit,
                    (m.ratio - 1.0) * 100.0,
                    m.p
                )
            })
            .collect();
        let standing = if e.confirmed {
            String::new()
        } else if e.at_tip {
            format!(" [held {} commit(s): not yet confirmed]", e.held)
        } else {
            format!(" [a blip: held {} commit(s)]", e.held)
        };
        s.push_str(&format!(
            "{}: {} {} {} on {}: first bad {}, last good {}: {}{standing}\n",
            e.kind,
            e.table,
            e.variant,
            e.key,
            e.machine,
            e.first_bad_commit,
            e.last_good_commit,
            moved.join("; ")
        ));
    }
    s
}

/// The terminal lines of what storing a detection did.
pub fn render_raised(r: &Raised) -> String {
    let list = |ids: &[String]| {
        if ids.is_empty() {
            String::new()
        } else {
            format!(" ({})", ids.join(", "))
        }
    };
    let mut s = format!(
        "{} new alert(s){}; {} pending{}; {} resolved{}",
        r.new_alerts.len(),
        list(&r.new_alerts),
        r.pending.len(),
        list(&r.pending),
        r.resolved.len(),
        list(&r.resolved)
    );
    for (what, ids) in [
        ("withdrawn", &r.withdrawn),
        ("silenced", &r.silenced),
        ("updated", &r.updated),
    ] {
        if !ids.is_empty() {
            s.push_str(&format!("; {} {what}{}", ids.len(), list(ids)));
        }
    }
    s.push('\n');
    s
}
