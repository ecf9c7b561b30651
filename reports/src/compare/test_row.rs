//! A row for unit tests to build on.

use super::{NumericsStatus, Row, SideStats, Verdict};
use perfdb_ingest::model::{Direction, Numerics};

/// A latency row (`t`, `triton`, no key, lower is better) with these sides and nothing
/// judged yet: tests set what they need on top.
pub(crate) fn test_row(base: SideStats, head: SideStats) -> Row {
    Row {
        table: "t".into(),
        variant: "triton".into(),
        key: vec![],
        key_text: String::new(),
        metric: "latency".into(),
        unit: "us".into(),
        direction: Direction::Lower,
        base,
        head,
        ratio: None,
        ratio_ci: None,
        change: None,
        p: None,
        p_mann_whitney: None,
        q: None,
        p_beyond: None,
        q_beyond: None,
        threshold: 0.05,
        verdict: Verdict::Invalid,
        reason: String::new(),
        control: false,
        head_numerics: Numerics::NotChecked,
        base_numerics: Numerics::NotChecked,
        numerics: NumericsStatus::Ok,
        modes: None,
        state: None,
        trials_needed: None,
        peak: None,
        measured_peak: None,
        gpu_offsets: Vec::new(),
        lost_df: 0.0,
    }
}
