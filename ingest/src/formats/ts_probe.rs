//! TokenSpeed kernel-probe stdout (aorta `ts_kernel_probe.sh`).
//!
//! `INFO`, `OK`, `FAIL`, `RESULT` take `: `; `METRIC`, `FAILREC`, `SCHEMAERR` a space.
//! METRIC fields are `key=value` with Python `str()` values. `numerics_passed=None` means
//! not checked. A failure is a `TS_KERNEL_FAIL: <reason>` line; there is no
//! `TS_KERNEL_RESULT: fail`, while the serving probe does print `TS_BENCH_RESULT: fail`.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::lines;
use crate::formats::support::text::parse_value;
use crate::formats::support::ts_fields::{canonical, field_metric, numerics_of, DEFAULT_TABLE};
use crate::model::Format;
use crate::model::{key_of, metric, Direction, Keys, Measurement, Name, Numerics, Parsed, Warning};

pub struct TsProbe;

/// Fields that describe the record rather than measure it.
const DESCRIPTIVE: &[&str] = &["kernel", "solution", "shape", "arch", "numerics_passed"];

/// `TS_KERNEL_INFO` fields that define the problem every record of the log measures
/// (`op` names the table): bf16 and fp8 runs of one kernel and shape are different rows.
const PROBLEM_FIELDS: &[&str] = &["dtype", "mode", "role"];

/// Does a METRIC field name say it is a measurement perfdb does not know (`avg_time_us`,
/// `mean_tflops`) rather than a parameter (`split_k`, `num_warps`)? Such a field must
/// not become identity: every trial's value would split the row.
fn looks_measured(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    lower.split('_').any(|w| {
        crate::formats::support::units::unit_of(w).is_some()
            || matches!(
                w,
                "latency"
                    | "time"
                    | "tflops"
                    | "gflops"
                    | "bandwidth"
                    | "bw"
                    | "diff"
                    | "err"
                    | "error"
                    | "throughput"
                    | "pct"
                    | "percent"
            )
    }) || lower.ends_with("_gb_s")
        || lower.ends_with("_tb_s")
}

/// `K4096xM1xN4096` -> [(K, 4096), (M, 1), (N, 4096)]: sorted parameter names glued to
/// their values, joined by `x`.
pub fn decode_shape(shape: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for part in shape.split('x') {
        let split = part.find(|c: char| c.is_ascii_digit() || c == '-')?;
        if split == 0 {
            return None;
        }
        let (name, value) = part.split_at(split);
        if !name.chars().all(|c| c.is_ascii_alphabetic() || c == '_') || value.is_empty() {
            return None;
        }
        out.push((name.to_string(), value.to_string()));
    }
    (!out.is_empty()).then_some(out)
}

impl Parser for TsProbe {
    fn format(&self) -> Format {
        Format::TsProbe
    }
    fn sniff(&self, text: &str) -> bool {
        // One scan for `TS_`, then a look at what follows.
        crate::formats::support::text::finder!("TS_")
            .find_iter(text.as_bytes())
            .any(|at| {
                let rest = &text.as_bytes()[at + 3..];
                rest.starts_with(b"KERNEL_") || rest.starts_with(b"BENCH_")
            })
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::default();
        let mut table = DEFAULT_TABLE.to_string();
        let mut fail_reasons: Vec<String> = Vec::new();
        let mut result: Option<String> = None;
        let mut problem: Vec<(String, String)> = Vec::new();
        let mut failrecs: Vec<Measurement> = Vec::new();
        for (no, line) in lines(text) {
            let line = line.trim_end();
            if let Some(rest) = line.strip_prefix("host_launch: ") {
                for (k, v) in rest.split_whitespace().filter_map(|f| f.split_once('=')) {
                    match k {
                        "image_digest" => parsed.provenance.image_digest = Some(v.to_string()),
                        "token" => parsed.provenance.token = Some(v.to_string()),
                        _ => {}
                    }
                }
            } else if let Some(rest) = line.strip_prefix("TS_KERNEL_INFO: ") {
                for (k, v) in rest.split_whitespace().filter_map(|f| f.split_once('=')) {
                    match k {
                        "op" => table = v.to_string(),
                        "arch" if !v.starts_with('<') => {
                            parsed.provenance.arch = Some(v.to_string())
                        }
                        k if PROBLEM_FIELDS.contains(&k) => {
                            problem.retain(|(n, _)| n != k);
                            problem.push((k.to_string(), v.to_string()));
                        }
                        _ => {}
                    }
                }
            } else if let Some(rest) = line.strip_prefix("TS_KERNEL_FAILREC ") {
                failrecs.extend(failrec_line(rest, &table, &problem, no, &mut parsed.keys)?);
            } else if let Some(rest) = line.strip_prefix("TS_KERNEL_METRIC ") {
                let ms = metric_line(
                    rest,
                    &table,
                    &problem,
                    no,
                    &mut parsed.warnings,
                    &mut parsed.keys,
                )?;
                if parsed.provenance.arch.is_none() {
                    parsed.provenance.arch = rest
                        .split_whitespace()
                        .find_map(|f| f.strip_prefix("arch="))
                        .map(str::to_string);
                }
                parsed.measurements.extend(ms);
            } else if let Some(rest) = line
                .strip_prefix("TS_KERNEL_FAIL: ")
                .or_else(|| line.strip_prefix("TS_BENCH_FAIL: "))
            {
                fail_reasons.push(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("TS_KERNEL_SCHEMAERR ") {
                fail_reasons.push(format!("schema error: {}", rest.trim()));
            } else if let Some(rest) = line
                .strip_prefix("TS_KERNEL_RESULT: ")
                .or_else(|| line.strip_prefix("TS_BENCH_RESULT: "))
            {
                result = Some(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("TS_BENCH_METRIC: ") {
                bench_fields(rest, &[], no, &mut parsed)?;
            } else if let Some(rest) = line.strip_prefix("TS_BENCH_OK: step ") {
                // `TS_BENCH_OK: step 1 completed=32 output_throughput=3585.9 ...` (the
                // warmup's `warmup step` lines are not measurements).
                if let Some((step, fields)) = rest.split_once(' ') {
                    let key = [("step".to_string(), step.to_string())];
                    bench_fields(fields, &key, no, &mut parsed)?;
                }
            }
        }
        attach_failrecs(&mut parsed, failrecs);
        // Verdict: any FAIL line fails the run; otherwise the RESULT line, if any.
        let prov = &mut parsed.provenance;
        if !fail_reasons.is_empty() {
            prov.verdict = Some(crate::model::RunVerdict::Fail);
            prov.verdict_detail = Some(fail_reasons.join("; "));
        } else if let Some(r) = result {
            // The closed set the warehouse stores; any other word is kept as the detail.
            match r.to_ascii_lowercase().as_str() {
                "pass" | "ok" => prov.verdict = Some(crate::model::RunVerdict::Pass),
                "fail" | "failed" => prov.verdict = Some(crate::model::RunVerdict::Fail),
                _ => prov.verdict_detail = Some(format!("result: {r}")),
            }
        }
        if parsed.measurements.is_empty() && prov.verdict.is_none() && prov.verdict_detail.is_none()
        {
            return Err(ParseError::at(
                0,
                "no TS_KERNEL_METRIC record and no TS_KERNEL_RESULT/FAIL line found",
            ));
        }
        Ok(parsed)
    }
}

/// The `key=value` fields of a `TS_BENCH_METRIC` or `TS_BENCH_OK: step` line, with the
/// units and directions of the serving results (`median_ttft_ms`, `output_throughput`).
fn bench_fields(
    fields: &str,
    key: &[(String, String)],
    no: usize,
    parsed: &mut Parsed,
) -> Result<(), ParseError> {
    let row =
        crate::formats::support::emit::Row::new(&mut parsed.keys, "ts_bench", "serve", key, no);
    for (k, v) in fields.split_whitespace().filter_map(|f| f.split_once('=')) {
        let value = parse_value(v)
            .map_err(|_| ParseError::at(no, format!("TS_BENCH field {k}='{v}' is not a number")))?;
        let m = row.put(
            &mut parsed.keys,
            &crate::formats::support::serving_fields::spec(k),
            value,
            v,
        );
        parsed.measurements.push(m);
    }
    Ok(())
}

/// A TS_KERNEL_METRIC record's `key=value` fields, in order.
fn metric_fields(rest: &str, no: usize) -> Result<Vec<(&str, &str)>, ParseError> {
    rest.split_whitespace()
        .map(|f| {
            f.split_once('=').ok_or_else(|| {
                ParseError::at(no, format!("TS_KERNEL_METRIC field '{f}' is not key=value"))
            })
        })
        .collect()
}

/// One TS_KERNEL_METRIC record: its measurements, keyed by the shape, the problem's
/// fields and its own descriptive ones; a field named like a measurement perfdb does not
/// know is kept unclassified, out of the key, and warned.
fn metric_line(
    rest: &str,
    table: &str,
    problem: &[(String, String)],
    no: usize,
    warnings: &mut Vec<Warning>,
    keys: &mut Keys,
) -> Result<Vec<Measurement>, ParseError> {
    let fields = metric_fields(rest, no)?;
    let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    let kernel = get("kernel")
        .ok_or_else(|| ParseError::at(no, "TS_KERNEL_METRIC record has no kernel= field"))?;
    let shape = get("shape")
        .ok_or_else(|| ParseError::at(no, "TS_KERNEL_METRIC record has no shape= field"))?;
    let mut key = decode_shape(shape).ok_or_else(|| {
        ParseError::at(
            no,
            format!(
                "shape '{shape}' is not <Name><value> parts joined by 'x' (e.g. K4096xM1xN4096)"
            ),
        )
    })?;
    let numerics = match get("numerics_passed") {
        Some(v) => numerics_of(v).map_err(|e| ParseError::at(no, e))?,
        None => Numerics::NotChecked,
    };
    // Every other field that is not a measurement defines the problem (`dtype=fp8`,
    // `split_k=4`): part of the identity. A field named like a measurement perfdb does
    // not know is kept out of it and reported.
    let mut unknown: Vec<(&str, &str)> = Vec::new();
    for (k, v) in &fields {
        if DESCRIPTIVE.contains(k) || field_metric(k).is_some() {
            continue;
        }
        if looks_measured(k) {
            unknown.push((k, v));
        } else {
            key.retain(|(n, _)| n != k);
            key.push((k.to_string(), v.to_string()));
        }
    }
    for (k, v) in problem {
        if !key.iter().any(|(n, _)| n == k) {
            key.push((k.clone(), v.clone()));
        }
    }
    let (key, key_order) = key_of(&key);
    let key = keys.push(&key);
    let (table, variant): (Name, Name) = (table.into(), kernel.into());
    let mut out = Vec::new();
    for (k, v) in &fields {
        let Some((metric_name, unit, direction)) = field_metric(k) else {
            continue;
        };
        let value = parse_value(v).map_err(|_| {
            ParseError::at(no, format!("TS_KERNEL_METRIC {k}='{v}' is not a number"))
        })?;
        let (unit, value, raw) = canonical(keys, unit, value, v);
        out.push(Measurement {
            table,
            variant,
            key,
            key_order,
            metric: metric_name.into(),
            unit: unit.into(),
            direction,
            value,
            raw,
            column: (*k).into(),
            numerics: if direction == Direction::None {
                Numerics::NotChecked
            } else {
                numerics
            },
            line: no as u32,
            note: None,
        });
    }
    for (k, v) in unknown {
        warnings.push(Warning {
            line: no,
            reason: format!(
                "TS_KERNEL_METRIC field '{k}' looks like a measurement perfdb does not know; \
                 stored as '{}', not compared and not part of the row identity",
                metric::UNCLASSIFIED
            ),
        });
        out.push(Measurement {
            table,
            variant,
            key,
            key_order,
            metric: metric::UNCLASSIFIED.into(),
            unit: "".into(),
            direction: Direction::None,
            value: parse_value(v).ok().flatten(),
            raw: keys.raw(v),
            column: k.into(),
            numerics: Numerics::NotChecked,
            line: no as u32,
            note: Some("unclassified field".into()),
        });
    }
    Ok(out)
}

/// `TS_KERNEL_FAILREC <kernel> shape={'M': 4096, 'N': 4096, 'K': 4096} max_abs_diff=0.5
/// max_rel_diff=0.25`: the numerics failure of one record, kept as its error values.
fn failrec_line(
    rest: &str,
    table: &str,
    problem: &[(String, String)],
    no: usize,
    keys: &mut Keys,
) -> Result<Vec<Measurement>, ParseError> {
    let bad = |why: &str| ParseError::at(no, format!("TS_KERNEL_FAILREC {why}"));
    let (kernel, rest) = rest
        .trim()
        .split_once(' ')
        .ok_or_else(|| bad("has no shape= after the kernel name"))?;
    let rest = rest
        .trim_start()
        .strip_prefix("shape={")
        .ok_or_else(|| bad("has no shape={...} after the kernel name"))?;
    let (dict, fields) = rest
        .split_once('}')
        .ok_or_else(|| bad("shape={... is not closed"))?;
    let mut key: Vec<(String, String)> = Vec::new();
    for item in dict.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = item
            .split_once(':')
            .ok_or_else(|| bad(&format!("shape item '{item}' is not 'name': value")))?;
        key.push((
            k.trim().trim_matches(['\'', '"']).to_string(),
            v.trim().trim_matches(['\'', '"']).to_string(),
        ));
    }
    key.extend(problem.iter().cloned());
    let (key, key_order) = key_of(&key);
    let key = keys.push(&key);
    let mut out = Vec::new();
    for (k, v) in fields.split_whitespace().filter_map(|f| f.split_once('=')) {
        let Some((metric_name, unit, direction)) = field_metric(k) else {
            continue;
        };
        let value = parse_value(v).map_err(|_| bad(&format!("{k}='{v}' is not a number")))?;
        out.push(Measurement {
            table: table.into(),
            variant: kernel.into(),
            key,
            key_order,
            metric: metric_name.into(),
            unit: unit.into(),
            direction,
            value,
            raw: keys.raw(v),
            column: k.into(),
            numerics: Numerics::Fail,
            line: no as u32,
            note: Some("TS_KERNEL_FAILREC".into()),
        });
    }
    if out.is_empty() {
        return Err(bad("has no max_abs_diff= or max_rel_diff= value"));
    }
    Ok(out)
}

/// Keep each FAILREC's values with the run, and mark the record they name as failed:
/// a failure record is evidence even where the METRIC line said nothing.
fn attach_failrecs(parsed: &mut Parsed, failrecs: Vec<Measurement>) {
    let (measurements, keys) = (&mut parsed.measurements, &parsed.keys);
    for f in &failrecs {
        for m in measurements.iter_mut() {
            // By text: the same key written twice (not in a row) has two ids.
            if m.table == f.table
                && m.variant == f.variant
                && keys.get(m.key) == keys.get(f.key)
                && m.direction != Direction::None
            {
                m.numerics = Numerics::Fail;
                m.note.get_or_insert_with(|| "TS_KERNEL_FAILREC".into());
            }
        }
    }
    measurements.extend(failrecs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(
            decode_shape("K4096xM1xN4096").unwrap(),
            vec![
                ("K".to_string(), "4096".to_string()),
                ("M".to_string(), "1".to_string()),
                ("N".to_string(), "4096".to_string())
            ]
        );
        assert_eq!(decode_shape("N1048576").unwrap().len(), 1);
        assert_eq!(decode_shape("4096x4096"), None);
    }

    #[test]
    fn metric_record() {
        let mut keys = Keys::default();
        let ms = metric_line(
            "kernel=gluon_mm solution=gluon shape=K4096xM1xN4096 arch=amd:9.5 median_latency_us=20.9 p99_latency_us=37.5 tflops=None bandwidth_gb_s=1606.2 numerics_passed=False",
            "gemm.mm",
            &[],
            9,
            &mut Vec::new(),
            &mut keys,
        )
        .unwrap();
        assert_eq!(ms.len(), 4);
        assert_eq!(&*ms[0].metric, "latency");
        assert_eq!(ms[0].numerics, Numerics::Fail);
        assert_eq!(ms[2].value, None);
        assert_eq!(keys.printed(ms[2].raw), "None");
        assert_eq!((&*ms[3].unit, ms[3].value), ("TB/s", Some(1.6062)));
        assert_eq!(keys.printed(ms[3].raw), "1606.2 GB/s");
        let err = metric_line(
            "kernel=k shape=K1 numerics_passed=maybe",
            "t",
            &[],
            3,
            &mut Vec::new(),
            &mut Keys::default(),
        )
        .unwrap_err();
        assert!(err.reason.contains("numerics_passed"), "{err}");
    }
}
