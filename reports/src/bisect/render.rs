//! A bisect's result as a person reads it (terminal, markdown, the one line an alert
//! shows and a webhook sends) or a program does (JSON).

use super::record::{Bisected, Evidence, Found};
use crate::fmt::{human_seconds, OutputFormat};

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

pub fn render(b: &Bisected, format: OutputFormat) -> String {
    match format {
        OutputFormat::Json => crate::json::pretty(b),
        OutputFormat::Table => text(b),
        OutputFormat::Markdown => markdown(b),
    }
}

fn headline(b: &Bisected) -> String {
    let mut s = String::new();
    if let Some(e) = b.ends_not_bad() {
        s.push_str(&match e.found {
            Found::Good => format!(
                "the step does not reproduce here: {} is not worse than {}; no culprit\n",
                short(&b.bad),
                short(&b.good)
            ),
            _ => format!(
                "the ends could not be verified ({} against {}: {}); no culprit\n",
                short(&b.bad),
                short(&b.good),
                e.why.as_deref().unwrap_or("undecided")
            ),
        });
        for ev in &e.evidence {
            s.push_str(&format!("  {}\n", evidence_line(ev)));
        }
        return s;
    }
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
        // A merge, or a parent cleared by a descendant's trials rather than its own:
        // say how each parent is known good.
        let measured = |k: &str| matches!(k, "measured good" | "the good end" | "the part's start");
        if p.parents.len() > 1 || p.parents.iter().any(|x| !measured(&x.known)) {
            let list: Vec<String> = p
                .parents
                .iter()
                .map(|x| format!("{} ({})", short(&x.sha), x.known))
                .collect();
            s.push_str(&format!("  parents: {}\n", list.join(", ")));
        }
        for e in &p.evidence {
            s.push_str(&format!("  {}\n", evidence_line(e)));
        }
        for (row, lines) in crate::compare::counters::lines(&p.counters, 6) {
            s.push_str(&format!("  counters of {row}\n"));
            for l in lines {
                s.push_str(&format!("    {l}\n"));
            }
        }
    }
    s
}

fn text(b: &Bisected) -> String {
    let mut s = format!(
        "{}: {} commit(s) after {} up to {}, {} step(s), {} of trials\n",
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

/// One line: the culprit(s) and their shares, the range proven, or why no culprit (the
/// alert's text, its page, the webhook).
pub fn summary(b: &Bisected) -> String {
    if let Some(e) = b.ends_not_bad() {
        return match e.found {
            Found::Good => "bisect: the step does not reproduce here (the bad end is not worse than the good): no culprit".to_string(),
            _ => "bisect: the ends could not be verified: no culprit".to_string(),
        };
    }
    if b.parts.is_empty() {
        return match &b.range {
            Some((g, x)) => format!(
                "bisect: not narrowed to one commit: after {} up to {}",
                short(g),
                short(x)
            ),
            None => "bisect: no result".to_string(),
        };
    }
    let each: Vec<String> = b
        .parts
        .iter()
        .map(|p| {
            let c = &p.culprit;
            let share = p
                .share
                .map(|s| format!(", {:.0}% of the step", s * 100.0))
                .unwrap_or_default();
            format!("{} \"{}\" by {}{share}", short(&c.sha), c.subject, c.author)
        })
        .collect();
    format!("bisect: culprit {}", each.join("; then "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bisect::record::{CommitInfo, Found, Part, Series, Step, Watch};

    fn evidence(ratio: f64, state: &str) -> Evidence {
        Evidence {
            row: "perf triton dim=(16777216,) dtype=torch.bfloat16 latency".into(),
            share: Some(0.52),
            state: Some(state.into()),
            ratio: Some(ratio),
            ratio_ci: Some((ratio * 0.99, ratio * 1.01)),
            trials: (12, 4),
        }
    }

    fn step(commit: &str, found: Found, why: Option<&str>) -> Step {
        Step {
            commit: commit.repeat(40 / commit.len()),
            against: "00".repeat(20),
            found,
            why: why.map(String::from),
            trials_a_side: if found == Found::Skip { 0 } else { 4 },
            seconds: 61.2,
            evidence: if found == Found::Skip {
                vec![]
            } else {
                vec![evidence(
                    if found == Found::Bad { 1.15 } else { 1.0 },
                    &found.to_string(),
                )]
            },
            counters: vec![],
        }
    }

    fn part(sha: &str, subject: &str) -> Part {
        Part {
            culprit: CommitInfo {
                sha: sha.repeat(40 / sha.len()),
                subject: subject.into(),
                author: "Ada Kernel <ada@example.com>".into(),
                date: "2026-12-01T00:11:00+00:00".into(),
            },
            share: Some(0.52),
            evidence: vec![evidence(1.15, "regression")],
            counters: vec![],
            parents: vec![],
        }
    }

    fn bisected() -> Bisected {
        Bisected {
            alert: Some("48b945bd5f5c8ba2".into()),
            label: "bisect-48b945bd5f5c8ba2".into(),
            good: "00".repeat(20),
            bad: "ff".repeat(20),
            commits: 30,
            watch: Watch {
                series: vec![Series {
                    alert: "48b945bd5f5c8ba2".into(),
                    table: "perf".into(),
                    variant: "triton".into(),
                    key_text: "dim=(16777216,) dtype=torch.bfloat16".into(),
                    metrics: vec!["latency".into()],
                    ratio: 1.3225,
                }],
                texts: vec![],
            },
            parts: vec![
                part("1a", "c10: tile 128 -> 64"),
                part("2b", "c25: drop the prefetch"),
            ],
            range: None,
            ends: None,
            steps: vec![
                step("0f", Found::Good, None),
                step(
                    "3c",
                    Found::Skip,
                    Some("the build exited with exit status: 1 (log: build-3c.log)"),
                ),
                step("1a", Found::Bad, None),
                step("2b", Found::Bad, None),
            ],
            skipped: vec!["3c".repeat(20)],
            gpu_seconds: 244.8,
            max_trials: 12,
        }
    }

    #[test]
    fn a_two_part_result_reads() {
        insta::assert_snapshot!("bisect_text", render(&bisected(), OutputFormat::Table));
        insta::assert_snapshot!(
            "bisect_markdown",
            render(&bisected(), OutputFormat::Markdown)
        );
    }

    #[test]
    fn a_range_reads_as_a_range() {
        let mut b = bisected();
        b.parts.clear();
        b.range = Some(("0f".repeat(20), "1a".repeat(20)));
        let text = render(&b, OutputFormat::Table);
        assert!(
            text.contains(
                "not narrowed to one commit: the step lies after 0f0f0f0f0f0f up to 1a1a1a1a1a1a"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_one_line_says_why_there_is_no_culprit() {
        let mut b = bisected();
        assert!(
            summary(&b).starts_with("bisect: culprit 1a1a1a1a1a1a \"c10: tile 128 -> 64\" by Ada Kernel <ada@example.com>, 52% of the step; then 2b2b2b2b2b2b"),
            "{}",
            summary(&b)
        );
        b.parts.clear();
        b.range = Some(("aa".into(), "bb".into()));
        assert_eq!(
            summary(&b),
            "bisect: not narrowed to one commit: after aa up to bb"
        );
        b.ends = Some(step("ff", Found::Good, None));
        assert!(
            summary(&b).contains("does not reproduce here"),
            "{}",
            summary(&b)
        );
        b.ends = Some(step("ff", Found::Skip, Some("the build exited with 1")));
        assert!(
            summary(&b).contains("could not be verified"),
            "{}",
            summary(&b)
        );
        b.ends = Some(step("ff", Found::Bad, None));
        assert!(summary(&b).contains("not narrowed"), "{}", summary(&b));
    }

    #[test]
    fn the_record_reads_back_as_it_was_written() {
        let mut b = bisected();
        b.ends = Some(step("ff", Found::Bad, None));
        let text = render(&b, OutputFormat::Json);
        let back: Bisected = serde_json::from_str(&text).unwrap();
        assert_eq!(back, b);
    }
}
