//! Step 3: pair each row of base with the same row of head (after [`super::matching`]
//! reconciled their keys), count the rows one side lacks, and assess each pair on its
//! own: validity, sufficiency, ratio and test ([`super::decide::assess`]).

use super::decide::{assess, is_control, side_stats};
use super::load::{Loaded, Value};
use super::matching::{self, Positional};
use super::strata::{self, Stratified};
use super::{NumericsStatus, OneSided, OneSidedKind, Options, Row, Verdict};
use crate::stats;
use perfdb_ingest::model::SeriesKey;
use perfdb_ingest::model::{self, key_from_json, Direction, Numerics};
use std::collections::{BTreeSet, HashMap};

/// The pairs, assessed one by one, and what did not pair.
pub(super) struct Paired {
    pub rows: Vec<Row>,
    pub only_in_base: Vec<OneSided>,
    pub only_in_head: Vec<OneSided>,
    /// Rows whose every value is missing on both sides.
    pub not_measured: usize,
    /// Each group of rows with the same key columns (a table can hold several).
    pub key_names: BTreeSet<(String, Vec<String>)>,
    pub warnings: Vec<String>,
    /// Repeated tables whose copies could not be paired.
    pub unpaired_tables: usize,
}

/// Each row's key in the order its source printed it.
struct KeyOrders {
    orders: HashMap<(String, String), String>,
    /// A key re-made from the columns both sides share has no order of its own: any
    /// row of its table with the fuller key gives it (one per table, found once).
    table_orders: HashMap<String, String>,
}

impl KeyOrders {
    fn new(b: &mut Loaded, h: &mut Loaded) -> KeyOrders {
        let mut orders = std::mem::take(&mut h.orders);
        for (k, v) in std::mem::take(&mut b.orders) {
            orders.entry(k).or_insert(v);
        }
        let mut table_orders: HashMap<String, String> = HashMap::new();
        for ((t, _), order) in &orders {
            table_orders
                .entry(t.clone())
                .or_insert_with(|| order.clone());
        }
        KeyOrders {
            orders,
            table_orders,
        }
    }

    fn display_key(&self, table: &str, key_json: &str) -> Vec<(String, String)> {
        let key = key_from_json(key_json);
        let order = self
            .orders
            .get(&(table.to_string(), key_json.to_string()))
            .or_else(|| self.table_orders.get(table));
        match order {
            Some(order) => model::in_source_order(key, order),
            None => key,
        }
    }

    fn one_sided(&self, id: &SeriesKey, verdict: OneSidedKind) -> OneSided {
        OneSided {
            verdict,
            table: id.table.clone(),
            variant: id.variant.clone(),
            key: self.display_key(&id.table, &id.key),
            metric: id.metric.clone(),
            filled_from: None,
        }
    }
}

/// Pair base's rows with head's.
pub(super) fn pair(mut b: Loaded, mut h: Loaded, opt: &Options) -> Paired {
    let mut warnings = Vec::new();
    let repeated = b.repeated.len() + h.repeated.len();
    if repeated > 0 {
        let most = b.repeated.values().chain(h.repeated.values()).max();
        warnings.push(format!(
            "{} row(s) were printed more than once by one run (up to {} times): each run's \
             median is one trial, and n counts runs",
            repeated,
            most.copied().unwrap_or(2)
        ));
    }
    warnings.extend(matching::reconcile_key_columns(&mut b.rows, &mut h.rows));
    let positional = matching::positional_mismatches(&b.rows, &h.rows);
    warnings.extend(positional.iter().map(|m| m.warning()));
    let orders = KeyOrders::new(&mut b, &mut h);
    let mut out = Paired {
        rows: Vec::new(),
        only_in_base: Vec::new(),
        only_in_head: Vec::new(),
        not_measured: 0,
        key_names: BTreeSet::new(),
        warnings,
        unpaired_tables: positional.len(),
    };
    for id in h.rows.keys() {
        if !b.rows.contains_key(id) {
            out.only_in_head
                .push(orders.one_sided(id, OneSidedKind::New));
        }
    }
    let ids: Vec<SeriesKey> = b.rows.keys().cloned().collect();
    for id in ids {
        let (dir, mut bvals) = b.rows.remove(&id).expect("key from map");
        let Some((_, mut hvals)) = h.rows.remove(&id) else {
            out.only_in_base
                .push(orders.one_sided(&id, OneSidedKind::Missing));
            continue;
        };
        if bvals.iter().chain(&hvals).all(|v| v.value.is_none()) {
            out.not_measured += 1;
            continue;
        }
        let key = orders.display_key(&id.table, &id.key);
        out.key_names.insert((
            id.table.clone(),
            key.iter().map(|(k, _)| k.clone()).collect(),
        ));
        // Trials on several GPUs: each GPU's offset taken out first.
        let strata = match opt.strata {
            Some(_) => strata::adjust(&mut bvals, &mut hvals),
            None => None,
        };
        let sides = Sides {
            strata,
            dir,
            bvals: &bvals,
            hvals: &hvals,
            b: &b,
            h: &h,
        };
        out.rows.push(row(id, key, &sides, &positional, opt));
    }
    out
}

/// One identity's values on both sides, and the sides they came from.
struct Sides<'a> {
    strata: Option<Stratified>,
    dir: Direction,
    bvals: &'a [Value],
    hvals: &'a [Value],
    b: &'a Loaded,
    h: &'a Loaded,
}

/// A pair as one row, assessed.
fn row(
    id: SeriesKey,
    key: Vec<(String, String)>,
    sides: &Sides,
    positional: &[Positional],
    opt: &Options,
) -> Row {
    let Sides {
        ref strata,
        dir,
        bvals,
        hvals,
        b,
        h,
    } = *sides;
    let SeriesKey {
        table,
        variant,
        key: key_json,
        metric: metric_name,
        unit,
    } = id;
    let threshold = opt
        .overrides
        .iter()
        .find(|o| o.matches(&table, &variant, &metric_name))
        .map(|o| o.threshold)
        .unwrap_or(opt.threshold);
    let worst = |vals: &[Value]| {
        vals.iter()
            .map(|v| v.numerics)
            .reduce(Numerics::worst)
            .unwrap_or(Numerics::NotChecked)
    };
    // A non-zero `error` value of the row's variant fails its numerics, on either
    // side: present on both, it is no new failure of head.
    let err_id = (table.clone(), variant.clone(), key_json.clone());
    let mut head_numerics = worst(hvals);
    if h.err_nonzero.contains_key(&err_id) {
        head_numerics = Numerics::Fail;
    }
    let mut base_numerics = worst(bvals);
    if b.err_nonzero.contains_key(&err_id) {
        base_numerics = Numerics::Fail;
    }
    let control = is_control(&variant, &opt.control);
    let mut row = Row {
        base: side_stats(bvals, dir),
        head: side_stats(hvals, dir),
        table,
        variant,
        key_text: model::key_display(&key),
        key,
        metric: metric_name,
        unit,
        direction: dir,
        ratio: None,
        ratio_ci: None,
        change: None,
        p: None,
        p_mann_whitney: None,
        q: None,
        p_beyond: None,
        q_beyond: None,
        threshold,
        verdict: Verdict::Invalid,
        reason: String::new(),
        control,
        head_numerics,
        base_numerics,
        numerics: NumericsStatus::of(base_numerics, head_numerics),
        modes: None,
        state: None,
        trials_needed: None,
        peak: None,
        measured_peak: None,
        gpu_offsets: strata
            .as_ref()
            .map(|s| s.offsets.clone())
            .unwrap_or_default(),
        lost_df: strata.as_ref().map_or(0.0, |s| s.lost_df),
    };
    assess(&mut row, bvals, hvals, opt);
    // Each side on its own: pooled, a real change is two modes too.
    row.modes = stats::modes::two_modes(&row.base.finite())
        .or_else(|| stats::modes::two_modes(&row.head.finite()));
    if let Some(m) = positional.iter().find(|m| m.covers(&row.table)) {
        row.verdict = Verdict::Invalid;
        row.p = None;
        row.reason = m.row_reason();
    }
    row
}
