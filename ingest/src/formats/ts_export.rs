//! TokenSpeed `kernel_bench.<token>.json`: a JSON array of benchmark records.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::ts_fields::{field_metric, numerics_of};
use crate::model::Format;
use crate::model::{key_of, Direction, Measurement, Name, Numerics, Parsed};
use serde_json::Value;

pub struct TsExport;

impl Parser for TsExport {
    fn format(&self) -> Format {
        Format::TsExport
    }
    fn sniff(&self, text: &str) -> bool {
        // A JSON array of records (`[{`), then the field every record has.
        text.trim_start()
            .strip_prefix('[')
            .is_some_and(|r| r.trim_start().starts_with('{'))
            && crate::formats::support::text::has(text, "\"kernel_name\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        // Python's json.dumps writes `NaN` / `Infinity` for non-finite floats.
        let cleaned = crate::formats::support::json::python_tokens(text);
        let text: &str = &cleaned;
        let records: Vec<Value> = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not a JSON array of records: {e}")))?;
        // Line of each record: the line of its n-th `"kernel_name"` key.
        let record_lines: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("\"kernel_name\""))
            .map(|(i, _)| i + 1)
            .collect();
        let mut parsed = Parsed::default();
        for (i, rec) in records.iter().enumerate() {
            let no = record_lines.get(i).copied().unwrap_or(1);
            let obj = rec
                .as_object()
                .ok_or_else(|| ParseError::at(no, format!("record {i} is not an object")))?;
            let s = |k: &str| obj.get(k).and_then(Value::as_str);
            let kernel = s("kernel_name")
                .ok_or_else(|| ParseError::at(no, format!("record {i} has no kernel_name")))?;
            let table = match (s("op_family"), s("op_mode")) {
                (Some(f), Some(m)) => format!("{f}.{m}"),
                (Some(f), None) => f.to_string(),
                _ => crate::formats::support::ts_fields::DEFAULT_TABLE.to_string(),
            };
            let mut key_cells: Vec<(String, String)> = match obj.get("shape_params") {
                Some(Value::Object(p)) => {
                    let mut kv: Vec<(String, String)> =
                        p.iter().map(|(k, v)| (k.clone(), json_scalar(v))).collect();
                    kv.sort();
                    kv
                }
                _ => {
                    return Err(ParseError::at(
                        no,
                        format!("record {i} has no shape_params object"),
                    ))
                }
            };
            if let Some(d) = s("dtype") {
                key_cells.push(("dtype".to_string(), d.to_string()));
            }
            let (key, key_order) = key_of(&key_cells);
            let key = parsed.keys.push(&key);
            let (table, variant): (Name, Name) = (table.into(), kernel.into());
            let numerics = match obj.get("numerics_passed") {
                None => Numerics::NotChecked,
                Some(Value::Bool(true)) => Numerics::Pass,
                Some(Value::Bool(false)) => Numerics::Fail,
                Some(Value::Null) => Numerics::NotChecked,
                Some(other) => numerics_of(&other.to_string())
                    .map_err(|e| ParseError::at(no, format!("record {i}: {e}")))?,
            };
            if parsed.provenance.arch.is_none() {
                parsed.provenance.arch = s("platform_arch").map(str::to_string);
            }
            for (field, v) in obj {
                let Some((metric, unit, direction)) = field_metric(field) else {
                    continue;
                };
                let value = match v {
                    Value::Null => None,
                    Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
                    other => {
                        return Err(ParseError::at(
                            no,
                            format!("record {i}: {field} is {other}, not a number or null"),
                        ))
                    }
                };
                let (unit, value, raw) = crate::formats::support::ts_fields::canonical(
                    &mut parsed.keys,
                    unit,
                    value,
                    &v.to_string(),
                );
                parsed.measurements.push(Measurement {
                    table,
                    variant,
                    key,
                    key_order,
                    metric: metric.into(),
                    unit: unit.into(),
                    direction,
                    value,
                    raw,
                    column: field.as_str().into(),
                    numerics: if direction == Direction::None {
                        Numerics::NotChecked
                    } else {
                        numerics
                    },
                    line: no as u32,
                    note: None,
                });
            }
        }
        Ok(parsed)
    }
}

fn json_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
