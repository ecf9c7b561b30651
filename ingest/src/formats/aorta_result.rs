//! aorta's `result.json` (sample 22).
//!
//! - `result.json`, one per trial: its `verdict` and `exit_code` are the run's verdict
//!   (anything but `pass` fails the run, the exit code and the detectors that fired in
//!   the detail); `walltime_sec` and `peak_vram_mib` are measurements (lower is better),
//!   `tier_durations_ms` and `capture` are kept derived. The cell is the variant of
//!   table `aorta`; `trial_index` and `timed_out` become tags.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{lines_of, Row, Spec};
use crate::formats::support::json::{self, Fields};
use crate::model::Format;
use crate::model::{empty_order, metric, Direction, Parsed, RunVerdict};
use std::borrow::Cow;

pub struct AortaResult;

impl Parser for AortaResult {
    fn format(&self) -> Format {
        Format::AortaResult
    }
    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && crate::formats::support::text::has(text, "\"verdict\"")
            && crate::formats::support::text::has(text, "\"exit_code\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        // Python's json.dumps writes `NaN` / `Infinity` for non-finite floats.
        let cleaned = crate::formats::support::json::python_tokens(text);
        let text: &str = &cleaned;
        let obj: Fields = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not a JSON object: {e}")))?;
        let line_of = |k: &str| {
            lines_of(text, &format!("\"{k}\""))
                .first()
                .copied()
                .unwrap_or(1)
        };
        let verdict = obj
            .str("verdict")
            .ok_or_else(|| ParseError::at(line_of("verdict"), "`verdict` is not a string"))?;
        let exit_code = match obj.get("exit_code") {
            None => None,
            Some("null") => None,
            Some(c) => Some(c.parse::<i64>().map_err(|_| {
                ParseError::at(
                    line_of("exit_code"),
                    format!("`exit_code` is {c}, not an integer"),
                )
            })?),
        };
        let mut parsed = Parsed::default();
        let prov = &mut parsed.provenance;
        if verdict == "pass" && exit_code.unwrap_or(0) == 0 {
            prov.verdict = Some(RunVerdict::Pass);
        } else {
            let mut why = vec![format!("verdict {verdict}")];
            if let Some(c) = exit_code {
                why.push(format!("exit code {c}"));
            }
            let fired: Vec<String> = obj
                .get("failure_detectors_fired")
                .and_then(|f| serde_json::from_str(f).ok())
                .unwrap_or_default();
            if !fired.is_empty() {
                why.push(format!("detectors fired: {}", fired.join(", ")));
            }
            prov.verdict = Some(RunVerdict::Fail);
            prov.verdict_detail = Some(why.join("; "));
        }
        for tag in ["trial_index", "timed_out"] {
            if let Some(v) = obj.get(tag).filter(|v| *v != "null") {
                prov.tags
                    .push((tag.to_string(), json::key_text(v).into_owned()));
            }
        }
        let variant = obj.str("cell_name");
        let variant = variant.as_deref().unwrap_or("trial");
        // Every value of a trial has the key with no cells.
        let key = parsed.keys.empty();
        let row = |k: &str| Row {
            table: "aorta".into(),
            variant: variant.into(),
            key,
            key_order: empty_order(),
            line: line_of(k) as u32,
        };
        let number = |k: &str, v: &str| {
            json::number(v)
                .map_err(|t| ParseError::at(line_of(k), format!("`{k}` is {t}, not a number")))
        };
        if let Some(v) = obj.get("walltime_sec") {
            let spec = Spec::measured(Some("walltime"), "sec", "walltime_sec");
            let value = number("walltime_sec", v)?;
            let m = row("walltime_sec").put(&mut parsed.keys, &spec, value, v);
            parsed.measurements.push(m);
        }
        if let Some(v) = obj.get("peak_vram_mib") {
            let spec = Spec::directed("peak_vram", "MiB", Direction::Lower, "peak_vram_mib");
            let value = number("peak_vram_mib", v)?;
            let m = row("peak_vram_mib").put(&mut parsed.keys, &spec, value, v);
            parsed.measurements.push(m);
        }
        if let Some(v) = exit_code {
            let spec = Spec::derived("exit_code", "", "exit_code", None);
            let m = row("exit_code").put(&mut parsed.keys, &spec, Some(v as f64), &v.to_string());
            parsed.measurements.push(m);
        }
        for (group, unit) in [("tier_durations_ms", "ms"), ("capture", "")] {
            let Some(m) = obj
                .get(group)
                .and_then(|g| crate::formats::support::json_scan::fields(g).ok())
            else {
                continue;
            };
            for (k, v) in &m.0 {
                let column = format!("{group}.{}", k.0);
                let spec = if unit.is_empty() {
                    Spec::derived(metric::UNCLASSIFIED, "", &column, None)
                } else {
                    Spec::measured(Some(&format!("{}_duration", k.0)), unit, &column).kept()
                };
                let printed = json::text(v).unwrap_or(Cow::Borrowed(v));
                let value = json::number(v).ok().flatten();
                let m = row(group).put(&mut parsed.keys, &spec, value, &printed);
                parsed.measurements.push(m);
            }
        }
        Ok(parsed)
    }
}
