//! What names one series, wherever perfdb reads one (a comparison's rows, a history's
//! series, the noise of each, the overview, the stale-data check).

use serde::{Deserialize, Serialize};

/// One series: a row of a table (its variant and its key's canonical JSON) measured as
/// one metric in one unit. Ordered by the five in that order, which is the order
/// comparisons list their rows in. A key whose metric and unit are empty
/// ([`SeriesKey::row`]) names the row itself, all its metrics; one whose variant alone
/// is empty names what a control's row shares with the rows it gates (compare's
/// control gating).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeriesKey {
    pub table: String,
    pub variant: String,
    /// The key's canonical JSON (`key_json`).
    pub key: String,
    pub metric: String,
    pub unit: String,
}

impl SeriesKey {
    /// The row `table`, `variant`, `key`: every metric of it.
    pub fn row(table: String, variant: String, key: String) -> SeriesKey {
        SeriesKey {
            table,
            variant,
            key,
            ..SeriesKey::default()
        }
    }
}
