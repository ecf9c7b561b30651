//! A bisect's result as a person reads it (terminal, markdown) or a program does (JSON).

use super::{Bisected, Evidence};
use crate::cli::BisectFormat;
use perfdb_reports::fmt::human_seconds;

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn evidence_line(e: &Evidence) -> String {
    let ratio = e.ratio.map(|r| format!("{r:.3}x")).unwrap_or("-".into());
    let ci = e
        .ratio_ci
        .map(|(l, h)| format!(" (95% {l:.3}-{h:.3})"))
        .unwrap_or_default();
    format!(
        "{}: {ratio}{ci}, {}, {}+{} trials",
        e.row,
        e.state.as_deref().unwrap_or("-"),
        e.trials.0,
        e.trials.1
    )
}

pub fn render(b: &Bisected, format: BisectFormat) -> String {
    match format {
        BisectFormat::Json => serde_json::to_string_pretty(b).expect("serialises") + "\n",
        BisectFormat::Table => text(b),
        BisectFormat::Markdown => markdown(b),
    }
}

fn headline(b: &Bisected) -> String {
    let mut s = String::new();
    if b.parts.is_empty() {
        let (g, x) = b.range.clone().unwrap_or_default();
        s.push_str(&format!(
            "not narrowed to one commit: the step lies after {} up to {}\n",
            short(&g),
            short(&x)
        ));
        return s;
    }
    if b.parts.len() > 1 {
        s.push_str(&format!("the step is in {} parts:\n", b.parts.len()));
    }
    for p in &b.parts {
        let c = &p.culprit;
        let share = p
            .share
            .map(|s| format!(" ({:.0}% of the alert's step)", s * 100.0))
            .unwrap_or_default();
        s.push_str(&format!(
            "culprit {}{share}: {}\n  {} · {}\n",
            short(&c.sha),
            c.subject,
            c.author,
            c.date
        ));
        if p.evidence.is_empty() {
            s.push_str("  the bad end itself: its evidence is the alert's step\n");
        }
        for e in &p.evidence {
            s.push_str(&format!("  {}\n", evidence_line(e)));
        }
    }
    s
}

fn text(b: &Bisected) -> String {
    let mut s = format!(
        "bisect {}: {} commit(s) after {} up to {}, {} step(s), {} of trials\n",
        b.label,
        b.commits,
        short(&b.good),
        short(&b.bad),
        b.steps.len(),
        human_seconds(b.gpu_seconds)
    );
    s.push_str(&headline(b));
    if !b.skipped.is_empty() {
        let list: Vec<&str> = b.skipped.iter().map(|c| short(c)).collect();
        s.push_str(&format!("skipped: {}\n", list.join(", ")));
    }
    s.push_str("steps:\n");
    for st in &b.steps {
        s.push_str(&format!(
            "  {} against {}: {}{} ({} a side, {})\n",
            short(&st.commit),
            short(&st.against),
            st.found,
            st.why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default(),
            st.trials_a_side,
            human_seconds(st.seconds)
        ));
    }
    s
}

fn markdown(b: &Bisected) -> String {
    let mut s = format!(
        "### perfdb bisect `{}`\n\n{} commit(s) after `{}` up to `{}`: {} step(s), {} of trials.\n\n```\n{}```\n",
        b.label,
        b.commits,
        short(&b.good),
        short(&b.bad),
        b.steps.len(),
        human_seconds(b.gpu_seconds),
        headline(b)
    );
    if !b.skipped.is_empty() {
        let list: Vec<String> = b
            .skipped
            .iter()
            .map(|c| format!("`{}`", short(c)))
            .collect();
        s.push_str(&format!("\nSkipped: {}\n", list.join(", ")));
    }
    s.push_str("\n| commit | against | found | trials a side | time |\n|---|---|---|---:|---:|\n");
    for st in &b.steps {
        s.push_str(&format!(
            "| `{}` | `{}` | {}{} | {} | {} |\n",
            short(&st.commit),
            short(&st.against),
            st.found,
            st.why
                .as_deref()
                .map(|w| format!(": {}", w.replace('|', "\\|")))
                .unwrap_or_default(),
            st.trials_a_side,
            human_seconds(st.seconds)
        ));
    }
    s
}
