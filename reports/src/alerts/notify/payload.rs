//! What an alert is sent as: the JSON of `perfdb alerts show` plus a one-line `text`,
//! or a preset's own body (Slack blocks, a GitHub issue comment).

use crate::alerts::notify::target::Preset;
use crate::alerts::AlertView;

/// The body of one alert for a target's preset.
pub fn body_for(preset: Preset, a: &AlertView) -> serde_json::Value {
    let plain = payload(a);
    let text = plain["text"].as_str().unwrap_or_default().to_string();
    match preset {
        Preset::Json => plain,
        Preset::Slack => serde_json::json!({
            "text": text,
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": format!(
                    "*perfdb alert `{}`* ({}): {} {} `{}` on {}\n{}",
                    a.id, a.status, a.table, a.variant, a.key_text, a.machine, text
                )}},
                {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
                    "label {} · first bad {} · last good {} · `perfdb alerts show {}`",
                    a.label, a.first_bad_commit, a.last_good_commit, a.id
                )}]}
            ]
        }),
        Preset::GitHub => serde_json::json!({
            "body": format!(
                "### perfdb alert `{}` ({})\n\n{}\n\n| | |\n|---|---|\n| kernel | {} {} |\n| shape | {} |\n| machine | {} |\n| first bad | {} (last good {}) |\n| change | {} |\n\n`perfdb alerts show {}` says how to confirm it.",
                a.id, a.status, text, a.table, a.variant, a.key_text, a.machine,
                a.first_bad_commit, a.last_good_commit, a.change_text(), a.id
            )
        }),
    }
}

/// The JSON body of one alert.
pub fn payload(a: &AlertView) -> serde_json::Value {
    let mut v = serde_json::to_value(a).expect("alert serialises");
    let text = match a.kind {
        crate::alerts::AlertKind::Regression => format!(
            "perfdb: {} {} {} on {} regressed at {} (last good {}): {} {} [{}]",
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.first_bad_commit,
            a.last_good_commit,
            a.metrics.join("/"),
            a.change_text(),
            a.id
        ),
        crate::alerts::AlertKind::Stale => format!(
            "perfdb: {} {} {} on {} stopped reporting after {} ({}) [{}]",
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.last_good_commit,
            a.change_text(),
            a.id
        ),
    };
    v["text"] = serde_json::Value::String(text);
    v
}
