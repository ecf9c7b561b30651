//! The alerts `perfdb detect` stored, read with their status: the current status is
//! the latest status change, and an alert with none yet (its run stopped between the
//! two commits) is pending. Every reader of alerts (`perfdb alerts`, detect, the
//! overview, the pages) reads them here.

use crate::db::{Db, DbError};
use perfdb_ingest::model::{key_from_json, AlertStatus, StatusChange};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("no alert id starts with '{0}'; `perfdb alerts list` shows them")]
    NotFound(String),
    #[error("'{prefix}' names {n} alerts; give more of the id")]
    Ambiguous { prefix: String, n: usize },
    #[error("alert {id} is {from}: it cannot be {action}")]
    Transition {
        id: String,
        from: AlertStatus,
        action: &'static str,
    },
    #[error("dismissing needs a reason: --note \"...\"")]
    NoteNeeded,
}

// A query or the warehouse failing is a reading error: one route for each, through
// [`DbError`].
impl From<duckdb::Error> for TriageError {
    fn from(e: duckdb::Error) -> Self {
        TriageError::Db(DbError::Query(e))
    }
}

impl From<perfdb_ingest::warehouse::WarehouseError> for TriageError {
    fn from(e: perfdb_ingest::warehouse::WarehouseError) -> Self {
        TriageError::Db(DbError::Warehouse(e))
    }
}

/// What an alert is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertKind {
    /// A step for the worse in the data (`perfdb detect`'s change points).
    Regression,
    /// Data that stopped arriving (a series, or a whole machine class).
    Stale,
}

/// An alert as people read it.
#[derive(Debug, Clone, Serialize)]
pub struct AlertView {
    pub id: String,
    pub kind: AlertKind,
    pub status: AlertStatus,
    pub label: String,
    pub table: String,
    pub variant: String,
    /// Identity name -> value.
    #[serde(serialize_with = "ser_pairs")]
    pub key: Vec<(String, String)>,
    /// The canonical key, as `measurements.key` holds it.
    #[serde(skip)]
    pub key_json: String,
    /// The fingerprint of the alert's newest revision.
    #[serde(skip)]
    pub fingerprint: String,
    pub key_text: String,
    /// Names of the metrics that moved.
    pub metrics: Vec<String>,
    /// Every moved metric with its medians, ratio and p, as stored (`detect`'s
    /// `MetricMove`, or a stale metric; an older perfdb stored fewer fields): given back
    /// whole in JSON, read through [`AlertView::moved`].
    pub metric_detail: serde_json::Value,
    pub machine: String,
    pub last_good_commit: String,
    pub first_bad_commit: String,
    pub ratio: f64,
    pub p: f64,
    pub runs: serde_json::Value,
    pub created_at_us: i64,
    /// Every status change, oldest first.
    pub history: Vec<StatusChange>,
}

fn ser_pairs<S: serde::Serializer>(kv: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(kv.len()))?;
    for (k, v) in kv {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// One metric of an alert, as its stored `metrics` list holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Moved {
    /// A series not measured for `missing_commits` commits.
    Stale {
        metric: String,
        missing_commits: u64,
    },
    /// A step: the medians before and after (none: not stored), after over before, and
    /// the test's p.
    Step {
        metric: String,
        unit: String,
        before_median: Option<f64>,
        after_median: Option<f64>,
        ratio: f64,
        p: f64,
    },
}

impl AlertView {
    /// The metrics that moved, read from the stored list.
    pub fn moved(&self) -> Vec<Moved> {
        let text = |m: &serde_json::Value, k: &str| m[k].as_str().unwrap_or("").to_string();
        self.metric_detail
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                if m["kind"] == "stale" {
                    Moved::Stale {
                        metric: text(m, "metric"),
                        missing_commits: m["missing_commits"].as_u64().unwrap_or(0),
                    }
                } else {
                    Moved::Step {
                        metric: text(m, "metric"),
                        unit: text(m, "unit"),
                        before_median: m["before_median"].as_f64(),
                        after_median: m["after_median"].as_f64(),
                        ratio: m["ratio"].as_f64().unwrap_or(f64::NAN),
                        p: m["p"].as_f64().unwrap_or(f64::NAN),
                    }
                }
            })
            .collect()
    }

    /// The change as people read it: `+12.3%`, or `no data (2 commits)`.
    pub fn change_text(&self) -> String {
        match self.kind {
            AlertKind::Regression => format!("{:+.1}%", (self.ratio - 1.0) * 100.0),
            AlertKind::Stale => {
                let missing = match self.moved().first() {
                    Some(Moved::Stale {
                        missing_commits, ..
                    }) => *missing_commits,
                    _ => 0,
                };
                format!("no data ({missing} commit(s))")
            }
        }
    }

    /// The columns of the `alerts` view [`AlertView::from_row`] reads, in its order.
    const COLUMNS: &'static str = "alert_id, label, table_name, variant, key, key_text, metrics, \
         machine, last_good_commit, first_bad_commit, ratio, p, runs, epoch_us(created_at), \
         fingerprint";

    /// An alert as stored: pending, with no history, until [`list`] reads its status
    /// changes.
    fn from_row(r: &duckdb::Row) -> duckdb::Result<AlertView> {
        let key: String = r.get(4)?;
        let metrics: String = r.get(6)?;
        let detail: serde_json::Value = serde_json::from_str(&metrics).unwrap_or_default();
        let runs: String = r.get(12)?;
        let kind = if detail[0]["kind"] == "stale" {
            AlertKind::Stale
        } else {
            AlertKind::Regression
        };
        Ok(AlertView {
            id: r.get(0)?,
            kind,
            status: AlertStatus::Pending,
            label: r.get(1)?,
            table: r.get(2)?,
            variant: r.get(3)?,
            key: key_from_json(&key),
            key_json: key,
            key_text: r.get(5)?,
            metrics: detail
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m["metric"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            metric_detail: detail,
            machine: r.get(7)?,
            last_good_commit: r.get(8)?,
            first_bad_commit: r.get(9)?,
            ratio: r.get(10)?,
            p: r.get(11)?,
            runs: serde_json::from_str(&runs).unwrap_or_default(),
            created_at_us: r.get(13)?,
            fingerprint: r.get(14)?,
            history: Vec::new(),
        })
    }
}

/// Every alert, newest first; with `status`, only those whose current status it is.
pub fn list(db: &Db, status: Option<AlertStatus>) -> Result<Vec<AlertView>, TriageError> {
    let sql = format!(
        "SELECT {} FROM alerts ORDER BY created_at DESC, alert_id",
        AlertView::COLUMNS
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let stored: Vec<AlertView> = stmt
        .query_map([], AlertView::from_row)?
        .collect::<Result<_, _>>()?;
    let mut hist = db.conn.prepare(
        "SELECT alert_id, status, epoch_us(changed_at), who, note FROM alert_status ORDER BY changed_at, status",
    )?;
    let changes: Vec<StatusChange> = hist
        .query_map([], |r| {
            Ok(StatusChange {
                alert_id: r.get(0)?,
                // A status this version does not know reads as pending, as an alert
                // whose status was never committed does.
                status: AlertStatus::parse(&r.get::<_, String>(1)?).unwrap_or(AlertStatus::Pending),
                at_us: r.get(2)?,
                who: r.get(3)?,
                note: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for mut a in stored {
        a.history = changes
            .iter()
            .filter(|c| c.alert_id == a.id)
            .cloned()
            .collect();
        a.status = a
            .history
            .last()
            .map(|c| c.status)
            .unwrap_or(AlertStatus::Pending);
        if status.is_none_or(|s| s == a.status) {
            out.push(a);
        }
    }
    Ok(out)
}

/// The one alert whose id starts with `prefix`.
pub fn find(db: &Db, prefix: &str) -> Result<AlertView, TriageError> {
    pick(list(db, None)?, prefix)
}

/// The one alert of `all` whose id starts with `prefix`.
pub fn pick(all: Vec<AlertView>, prefix: &str) -> Result<AlertView, TriageError> {
    let mut hits: Vec<AlertView> = all
        .into_iter()
        .filter(|a| !prefix.is_empty() && a.id.starts_with(prefix))
        .collect();
    match hits.len() {
        0 => Err(TriageError::NotFound(prefix.to_string())),
        1 => Ok(hits.remove(0)),
        n => Err(TriageError::Ambiguous {
            prefix: prefix.to_string(),
            n,
        }),
    }
}
