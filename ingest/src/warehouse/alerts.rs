//! The alert tables: records `perfdb detect` raised, their status changes, and
//! deliveries claimed by a conditional commit (two detects deliver once).

use super::commit::{append, commit_info, new_batch_id, FileIndex};
use super::files::{crash_point, read_columns};
use super::schema::{self};
use super::tables::{block_on, rel_of, Table};
use super::tables::{ALERT_DELIVERY_DIR, ALERT_RECORDS_DIR, ALERT_STATUS_DIR};
use super::{Result, Warehouse};
use crate::delta::{Action, Backoff, Snapshot};
use arrow::array::{Int32Array, StringArray};
use std::collections::{HashMap, HashSet};

impl Warehouse {
    /// Commit one delivery record (right after the receiver acknowledged it, so a
    /// process killed later never sends it again).
    pub fn commit_delivery(&self, d: &crate::model::Delivery) -> Result<()> {
        let logs = self.logs_creating()?;
        let rel = format!("{ALERT_DELIVERY_DIR}/part-{}.parquet", new_batch_id(""));
        let batch = schema::alert_delivery_batch(std::slice::from_ref(d));
        let add = self.write_flat(&rel, Table::AlertDelivery, batch)?;
        Ok(block_on(append(&logs, Table::AlertDelivery, vec![add]))?)
    }

    /// Claim (alert, target) pairs for delivery, in one conditional commit of a claim row
    /// (`http_status` 0) per pair that is free: not delivered (no 2xx row) and not
    /// claimed by another run less than `lease_us` ago without an answer recorded since.
    /// A run that loses the commit race reads the winner's claims and tries again with
    /// what is still free, so two runs never claim the same pair. One answer per pair,
    /// in order.
    pub fn claim_deliveries(
        &self,
        pairs: &[(String, String)],
        lease_us: i64,
        now_us: i64,
    ) -> Result<Vec<Claim>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let logs = self.logs_creating()?;
        let t = logs.table(Table::AlertDelivery);
        let mut snap = block_on(t.snapshot())?;
        let batch = new_batch_id("");
        let mut backoff = Backoff::default();
        for attempt in 0.. {
            let state = self.delivery_state(&snap)?;
            let answer: Vec<Claim> = pairs
                .iter()
                .map(|p| match state.get(p) {
                    Some((true, _, _)) => Claim::Delivered,
                    Some((false, 0, at)) if now_us - at < lease_us => Claim::Elsewhere,
                    _ => Claim::Ours,
                })
                .collect();
            let rows: Vec<crate::model::Delivery> = pairs
                .iter()
                .zip(&answer)
                .filter(|(_, a)| **a == Claim::Ours)
                .map(|((alert, target), _)| crate::model::Delivery {
                    alert_id: alert.clone(),
                    target: target.clone(),
                    delivered_at_us: now_us,
                    http_status: 0,
                    attempts: 0,
                })
                .collect();
            if rows.is_empty() {
                return Ok(answer);
            }
            let rel = format!("{ALERT_DELIVERY_DIR}/part-{batch}-claim{attempt}.parquet");
            let add = self.write_flat(
                &rel,
                Table::AlertDelivery,
                schema::alert_delivery_batch(&rows),
            )?;
            let won = block_on(t.commit_next(
                &mut snap,
                || logs.metadata(Table::AlertDelivery),
                vec![Action::Add(add), commit_info("WRITE")],
            ))?;
            if won {
                return Ok(answer);
            }
            block_on(async {
                backoff.wait().await?;
                t.update(&mut snap).await
            })?;
        }
        unreachable!("the claim loop returns")
    }

    /// (alert, target) -> (delivered, latest row's http_status, its time) over the
    /// delivery files live in `snap`.
    pub(crate) fn delivery_state(&self, snap: &Snapshot) -> Result<DeliveryState> {
        use arrow::array::TimestampMicrosecondArray;
        let rels: Vec<String> = snap
            .files
            .keys()
            .map(|p| rel_of(Table::AlertDelivery, p))
            .collect();
        self.local_all(&rels)?;
        let mut out = DeliveryState::new();
        for rel in &rels {
            let cols = [
                schema::alerts::ALERT_ID,
                schema::alerts::TARGET,
                schema::alerts::DELIVERED_AT,
                schema::alerts::HTTP_STATUS,
            ];
            for b in read_columns(&self.local(rel)?, &cols)? {
                let (Some(id), Some(target), Some(at), Some(status)) = (
                    b.column(0).as_any().downcast_ref::<StringArray>(),
                    b.column(1).as_any().downcast_ref::<StringArray>(),
                    b.column(2)
                        .as_any()
                        .downcast_ref::<TimestampMicrosecondArray>(),
                    b.column(3).as_any().downcast_ref::<Int32Array>(),
                ) else {
                    continue;
                };
                for i in 0..b.num_rows() {
                    let key = (id.value(i).to_string(), target.value(i).to_string());
                    let (st, t) = (status.value(i), at.value(i));
                    let e = out.entry(key).or_insert((false, st, t));
                    e.0 |= (200..300).contains(&st);
                    if t >= e.2 {
                        (e.1, e.2) = (st, t);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Commit alert records and status changes. `new_alerts` is called with the alert
    /// ids already stored and returns the records and the status changes to add. A
    /// record is stored once per fingerprint (one revision of an alert): a writer that
    /// loses the race drops the revisions the winner stored, and the status changes of
    /// alerts that are then stored by nobody. The records are committed first, then the
    /// status changes, so no status change ever names an alert that is not stored; a
    /// record left without a status (a crash between the two) reads as pending and the
    /// next `detect` gives it one.
    pub fn commit_alerts(
        &self,
        new_alerts: impl FnOnce(
            &HashSet<String>,
        ) -> (
            Vec<crate::model::AlertRecord>,
            Vec<crate::model::StatusChange>,
        ),
    ) -> Result<(
        Vec<crate::model::AlertRecord>,
        Vec<crate::model::StatusChange>,
    )> {
        let logs = self.logs_creating()?;
        let records_t = logs.table(Table::AlertRecords);
        let mut snap = block_on(records_t.snapshot())?;
        let (mut ids, mut fps) = (FileIndex::default(), FileIndex::default());
        let refresh = |ids: &mut FileIndex, fps: &mut FileIndex, snap: &Snapshot| {
            ids.refresh(self, Table::AlertRecords, snap, &[schema::alerts::ALERT_ID])?;
            fps.refresh(
                self,
                Table::AlertRecords,
                snap,
                &[schema::alerts::FINGERPRINT],
            )
        };
        refresh(&mut ids, &mut fps, &snap)?;
        let (mut records, mut changes) = new_alerts(&ids.ids());
        let batch = new_batch_id("");
        let mut backoff = Backoff::default();
        for attempt in 0.. {
            let stored = fps.ids();
            records.retain(|r| !stored.contains(&r.fingerprint));
            if records.is_empty() {
                break;
            }
            let rel = format!("{ALERT_RECORDS_DIR}/part-{batch}-{attempt}.parquet");
            let add = self.write_flat(&rel, Table::AlertRecords, schema::alerts_batch(&records))?;
            let actions = vec![Action::Add(add), commit_info("WRITE")];
            let won = block_on(records_t.commit_next(
                &mut snap,
                || logs.metadata(Table::AlertRecords),
                actions,
            ))?;
            if won {
                break;
            }
            block_on(async {
                backoff.wait().await?;
                records_t.update(&mut snap).await
            })?;
            refresh(&mut ids, &mut fps, &snap)?;
        }
        let stored = ids.ids();
        let ours: HashSet<&str> = records.iter().map(|r| r.alert_id.as_str()).collect();
        changes.retain(|c| stored.contains(&c.alert_id) || ours.contains(c.alert_id.as_str()));
        crash_point("alert-records-committed");
        if !changes.is_empty() {
            let rel = format!("{ALERT_STATUS_DIR}/part-{batch}.parquet");
            let add = self.write_flat(
                &rel,
                Table::AlertStatus,
                schema::alert_status_batch(&changes),
            )?;
            block_on(append(&logs, Table::AlertStatus, vec![add]))?;
        }
        Ok((records, changes))
    }
}

/// (alert, target) -> (delivered, the latest row's http_status, its time).
pub(crate) type DeliveryState = HashMap<(String, String), (bool, i32, i64)>;

/// What [`Warehouse::claim_deliveries`] answered for one (alert, target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Claimed by this run: send it, then record the answer.
    Ours,
    /// Another run claimed it within the lease and has not recorded an answer.
    Elsewhere,
    /// A 2xx answer is recorded: never sent again.
    Delivered,
}
