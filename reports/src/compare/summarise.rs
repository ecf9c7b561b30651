//! Step 4: one figure for the whole comparison (geometric mean of the rows' changes with
//! its intervals).

use super::{Options, Reduce, Row, SideStats, Summary};
use crate::stats;
use perfdb_ingest::model::Direction;

pub(super) fn summarize(rows: &[Row], opt: &Options) -> Summary {
    let compared: Vec<&Row> = rows
        .iter()
        // Only rows compared and trusted: a row that was insufficient, invalid, withheld
        // or unreliable has no business in the headline figure.
        .filter(|r| !r.control && r.change.is_some() && r.verdict.is_decided())
        // A trial's energy is no row's speed: said beside, not in the figure.
        .filter(|r| !super::is_energy(r))
        .collect();
    if compared.is_empty() {
        return Summary {
            geomean_ratio: None,
            ci: None,
            t_ci: None,
            rows: 0,
        };
    }
    let ws: Vec<f64> = compared
        .iter()
        .map(|r| 1.0 + r.change.expect("filtered"))
        .collect();
    let (g, t_ci) = stats::geomean_t_ci(&ws);
    // Bootstrap on lower-is-better values: invert higher-is-better ones.
    let strata: Vec<(Vec<f64>, Vec<f64>)> = compared
        .iter()
        .map(|r| {
            let f = |s: &SideStats| -> Vec<f64> {
                s.values
                    .iter()
                    .flatten()
                    .map(|v| {
                        if r.direction == Direction::Higher {
                            1.0 / v
                        } else {
                            *v
                        }
                    })
                    .collect()
            };
            (f(&r.base), f(&r.head))
        })
        .collect();
    let ci = match opt.reduce {
        Reduce::Best => stats::bootstrap_geomean_ci(&strata, stats::Statistic::Min),
        Reduce::Median => stats::bootstrap_geomean_ci(&strata, stats::Statistic::Median),
    };
    Summary {
        geomean_ratio: Some(g),
        ci,
        t_ci,
        rows: compared.len(),
    }
}
