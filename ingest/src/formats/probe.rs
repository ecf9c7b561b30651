//! TokenSpeed kernel-probe stdout (FORMATS.md §3, aorta `ts_kernel_probe.sh`).
//!
//! `INFO`, `OK`, `FAIL`, `RESULT` take `: `; `METRIC`, `FAILREC`, `SCHEMAERR` a space.
//! METRIC fields are `key=value` with Python `str()` values. `numerics_passed=None` means
//! not checked. A failure is a `TS_KERNEL_FAIL: <reason>` line; there is no
//! `TS_KERNEL_RESULT: fail`, while the serving probe does print `TS_BENCH_RESULT: fail`.

use super::{lines, Format, ParseError, Parser};
use crate::model::{
    empty_key, key_of, metric, Direction, Key, Measurement, Name, Numerics, Parsed, Raw,
};
use crate::text::parse_value;

pub struct TsProbe;

/// Table name when no `TS_KERNEL_INFO: ... op=` line precedes the records.
pub const DEFAULT_TABLE: &str = "ts_kernel";

/// Fields that describe the record rather than measure it.
const DESCRIPTIVE: &[&str] = &["kernel", "solution", "shape", "arch", "numerics_passed"];

/// (field, metric, unit, direction) of the numeric fields a METRIC line carries.
pub(crate) fn field_metric(field: &str) -> Option<(&'static str, &'static str, Direction)> {
    let lat = |m| Some((m, "us", Direction::Lower));
    match field {
        "median_latency_us" => lat(metric::LATENCY),
        "p90_latency_us" => lat("latency_p90"),
        "p99_latency_us" => lat("latency_p99"),
        "min_latency_us" => lat("latency_min"),
        "max_latency_us" => lat("latency_max"),
        "mean_latency_us" => lat("latency_mean"),
        "tflops" => Some((metric::THROUGHPUT, "TFLOPS", Direction::Higher)),
        "bandwidth_gb_s" => Some((metric::BANDWIDTH, "GB/s", Direction::Higher)),
        "max_abs_diff" => Some(("error_max_abs", "", Direction::None)),
        "max_rel_diff" => Some(("error_max_rel", "", Direction::None)),
        _ => None,
    }
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

pub(crate) fn numerics_of(v: &str) -> Result<Numerics, String> {
    match v {
        "True" | "true" => Ok(Numerics::Pass),
        "False" | "false" => Ok(Numerics::Fail),
        "None" | "null" => Ok(Numerics::NotChecked),
        other => Err(format!(
            "numerics_passed must be True, False or None, got '{other}'"
        )),
    }
}

impl Parser for TsProbe {
    fn format(&self) -> Format {
        Format::TsProbe
    }
    fn sniff(&self, text: &str) -> bool {
        // One scan for `TS_`, then a look at what follows.
        memchr::memmem::find_iter(text.as_bytes(), b"TS_").any(|at| {
            let rest = &text.as_bytes()[at + 3..];
            rest.starts_with(b"KERNEL_") || rest.starts_with(b"BENCH_")
        })
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::default();
        let mut table = DEFAULT_TABLE.to_string();
        let mut fail_reasons: Vec<String> = Vec::new();
        let mut result: Option<String> = None;
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
                        _ => {}
                    }
                }
            } else if let Some(rest) = line.strip_prefix("TS_KERNEL_METRIC ") {
                let ms = metric_line(rest, &table, no)?;
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
                for (k, v) in rest.split_whitespace().filter_map(|f| f.split_once('=')) {
                    let value = parse_value(v).map_err(|_| {
                        ParseError::at(no, format!("TS_BENCH_METRIC {k}='{v}' is not a number"))
                    })?;
                    parsed.measurements.push(Measurement {
                        table: "ts_bench".into(),
                        variant: "serve".into(),
                        key: empty_key(),
                        metric: k.into(),
                        unit: "".into(),
                        direction: Direction::None,
                        value,
                        raw: Raw::new(v),
                        column: k.into(),
                        numerics: Numerics::NotChecked,
                        line: no as u32,
                    });
                }
            }
        }
        // Verdict: any FAIL line fails the run; otherwise the RESULT line, if any.
        let prov = &mut parsed.provenance;
        if !fail_reasons.is_empty() {
            prov.verdict = Some("fail".to_string());
            prov.verdict_detail = Some(fail_reasons.join("; "));
        } else if let Some(r) = result {
            prov.verdict = Some(r);
        }
        if parsed.measurements.is_empty() && prov.verdict.is_none() {
            return Err(ParseError::at(
                0,
                "no TS_KERNEL_METRIC record and no TS_KERNEL_RESULT/FAIL line found",
            ));
        }
        Ok(parsed)
    }
}

fn metric_line(rest: &str, table: &str, no: usize) -> Result<Vec<Measurement>, ParseError> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for f in rest.split_whitespace() {
        let (k, v) = f.split_once('=').ok_or_else(|| {
            ParseError::at(no, format!("TS_KERNEL_METRIC field '{f}' is not key=value"))
        })?;
        fields.push((k, v));
    }
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
    // Extra descriptive fields (dtype=...) are part of the identity.
    for (k, v) in &fields {
        if !DESCRIPTIVE.contains(k) && field_metric(k).is_none() && parse_value(v).is_err() {
            key.push((k.to_string(), v.to_string()));
        }
    }
    let key: Key = key_of(&key);
    let (table, variant): (Name, Name) = (table.into(), kernel.into());
    let mut out = Vec::new();
    for (k, v) in &fields {
        let Some((metric_name, unit, direction)) = field_metric(k) else {
            continue;
        };
        let value = parse_value(v).map_err(|_| {
            ParseError::at(no, format!("TS_KERNEL_METRIC {k}='{v}' is not a number"))
        })?;
        out.push(Measurement {
            table,
            variant,
            key: key.clone(),
            metric: metric_name.into(),
            unit: unit.into(),
            direction,
            value,
            raw: Raw::new(v),
            column: (*k).into(),
            numerics: if direction == Direction::None {
                Numerics::NotChecked
            } else {
                numerics
            },
            line: no as u32,
        });
    }
    Ok(out)
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
        let ms = metric_line(
            "kernel=gluon_mm solution=gluon shape=K4096xM1xN4096 arch=amd:9.5 median_latency_us=20.9 p99_latency_us=37.5 tflops=None bandwidth_gb_s=1606.2 numerics_passed=False",
            "gemm.mm",
            9,
        )
        .unwrap();
        assert_eq!(ms.len(), 4);
        assert_eq!(&*ms[0].metric, "latency");
        assert_eq!(ms[0].numerics, Numerics::Fail);
        assert_eq!(ms[2].value, None);
        assert_eq!(ms[2].raw, "None");
        let err = metric_line("kernel=k shape=K1 numerics_passed=maybe", "t", 3).unwrap_err();
        assert!(err.reason.contains("numerics_passed"), "{err}");
    }
}
