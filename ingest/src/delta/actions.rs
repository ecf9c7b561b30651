//! The log's actions as they are written, one JSON object a line (`add`, `remove`,
//! `protocol`, `metaData`, `txn`), the schema string Spark reads, and path encoding.

use arrow::datatypes::{DataType, Schema, TimeUnit};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `add`: a data file joins the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// Relative to the table root, URL-encoded as the protocol asks (`label=a%20b/...`).
    pub path: String,
    pub partition_values: BTreeMap<String, Option<String>>,
    pub size: u64,
    pub modification_time: i64,
    pub data_change: bool,
    /// `{"numRecords": n}`: readers plan with it; perfdb checks row counts with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// The protocol's free-form file tags: perfdb's batch gate (`crate::warehouse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// `remove`: a data file leaves the table (its bytes stay until a vacuum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    pub path: String,
    pub deletion_timestamp: i64,
    pub data_change: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_values: Option<BTreeMap<String, Option<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    pub min_reader_version: u32,
    pub min_writer_version: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Format {
    pub provider: String,
    pub options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub format: Format,
    pub schema_string: String,
    pub partition_columns: Vec<String>,
    pub configuration: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_time: Option<i64>,
}

/// `txn`: the last version of an application's own sequence this table has seen
/// (perfdb: a writer's batch id), so a retried write can tell it already landed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Txn {
    pub app_id: String,
    pub version: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<i64>,
}

/// One line of a log file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Action {
    #[serde(rename = "protocol")]
    Protocol(Protocol),
    #[serde(rename = "metaData")]
    Metadata(Metadata),
    #[serde(rename = "add")]
    Add(Add),
    #[serde(rename = "remove")]
    Remove(Remove),
    #[serde(rename = "txn")]
    Txn(Txn),
    #[serde(rename = "commitInfo")]
    CommitInfo(Value),
}

/// The Delta (Spark) schema string of `schema`, with the partition columns (strings,
/// held in the paths, not the files) appended.
pub fn schema_string(schema: &Schema, partition_columns: &[&str]) -> String {
    let mut fields: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name(),
                "type": spark_type(f.data_type()),
                "nullable": f.is_nullable(),
                "metadata": {},
            })
        })
        .collect();
    for p in partition_columns {
        fields.push(serde_json::json!({
            "name": p, "type": "string", "nullable": true, "metadata": {},
        }));
    }
    serde_json::json!({"type": "struct", "fields": fields}).to_string()
}

pub(super) fn spark_type(t: &DataType) -> &'static str {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => "string",
        DataType::Int32 => "integer",
        DataType::Int64 => "long",
        DataType::Float64 => "double",
        DataType::Float32 => "float",
        DataType::Boolean => "boolean",
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "timestamp",
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp_ntz",
        other => panic!("no Delta type for {other}: perfdb's schemas do not use it"),
    }
}

/// Milliseconds since the Unix epoch, as the log's times are.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A path segment as the protocol writes it in `add.path` (percent-encoded beyond
/// unreserved characters), for partition directories like `label=feature/x`.
pub fn encode_path(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'=' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
