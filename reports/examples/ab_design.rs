//! Would the trial design cut the noise `perfdb ab` has to see through? On the recorded
//! H200 sweep (30 trials a side, ABBA order, base i and head i neighbours in time) it
//! prints, per latency row of a kernel variant, the spread of ln(latency) and what two
//! designs would leave of it:
//!
//! - the control as a covariate: the same trial's control row (torch, same key) moves
//!   with machine-level noise, so ln(kernel / control), or a regression on ln(control),
//!   could have less spread than ln(kernel);
//! - pairing: base i and head i ran next to each other, so the pair's difference removes
//!   slow drift when their correlation is positive.
//!
//! "trials" is the variance of the design's difference over the unpaired one's: the share
//! of trials it would need for the same interval (ignoring degrees of freedom, which cost
//! the paired design half). docs/STATS.md, "What the trial design would save", is its
//! output.
//!
//!   cargo run -p perfdb-reports --release --example ab_design [-- DIR]
//!
//! DIR holds `base/trialN.log` and `head/trialN.log` (default the sweep's
//! `sample-data/h200-gemm/ab30/aiter`).

use perfdb_reports::ab::replay::{read_trial, TrialRows};
use perfdb_reports::stats::{mean, variance};
use std::collections::BTreeMap;
use std::path::Path;

const CONTROL: &str = "torch";

fn arm(dir: &Path) -> Vec<TrialRows> {
    (1..)
        .map_while(|n| std::fs::read_to_string(dir.join(format!("trial{n}.log"))).ok())
        .map(|t| read_trial(&t).expect("a recorded trial reads"))
        .collect()
}

/// Per row (key, variant): ln(value) and the same trial's ln(control), trial by trial.
type Series = BTreeMap<(String, String), Vec<(f64, f64)>>;

fn series(trials: &[TrialRows]) -> Series {
    let mut out = Series::new();
    for rows in trials {
        let control: BTreeMap<String, f64> = rows
            .iter()
            .filter(|r| r.variant == CONTROL && r.metric == "latency")
            .map(|r| (format!("{} {:?}", r.table, r.key), r.values[0].ln()))
            .collect();
        for r in rows
            .iter()
            .filter(|r| r.variant != CONTROL && r.metric == "latency")
        {
            let key = format!("{} {:?}", r.table, r.key);
            if let Some(&c) = control.get(&key) {
                let shown = r.key.iter().map(|(k, v)| format!("{k}={v}"));
                let name = format!("{} {}", r.table, shown.collect::<Vec<_>>().join(" "));
                out.entry((name, r.variant.clone()))
                    .or_default()
                    .push((r.values[0].ln(), c));
            }
        }
    }
    out
}

fn corr(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// ln(kernel) adjusted by its regression on ln(control): its variance is var(k)(1 - r^2).
fn adjusted_var(s: &[(f64, f64)]) -> f64 {
    let (k, c): (Vec<f64>, Vec<f64>) = s.iter().copied().unzip();
    variance(&k) * (1.0 - corr(&k, &c).powi(2))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "sample-data/h200-gemm/ab30/aiter".to_string());
    let dir = Path::new(&dir);
    let (b, h) = (
        series(&arm(&dir.join("base"))),
        series(&arm(&dir.join("head"))),
    );
    println!("| row | sd ln | r with control | trials, ratio to control | trials, regression on control | r of base i, head i | trials, paired |");
    println!("|---|---|---|---|---|---|---|");
    let mut shares: [Vec<f64>; 3] = Default::default();
    for (id, bs) in &b {
        let Some(hs) = h.get(id) else { continue };
        let n = bs.len().min(hs.len());
        let (bs, hs) = (&bs[..n], &hs[..n]);
        let col = |s: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| s.iter().map(f).collect::<Vec<_>>();
        let (bk, hk) = (col(bs, |p| p.0), col(hs, |p| p.0));
        let (bc, hc) = (col(bs, |p| p.1), col(hs, |p| p.1));
        let unpaired = variance(&bk) + variance(&hk);
        let ratio = |k: &[f64], c: &[f64]| {
            variance(&k.iter().zip(c).map(|(a, b)| a - b).collect::<Vec<_>>())
        };
        let to_control = (ratio(&bk, &bc) + ratio(&hk, &hc)) / unpaired;
        let regression = (adjusted_var(bs) + adjusted_var(hs)) / unpaired;
        let paired = ratio(&bk, &hk) / unpaired;
        let r_control = (corr(&bk, &bc) + corr(&hk, &hc)) / 2.0;
        for (v, x) in shares.iter_mut().zip([to_control, regression, paired]) {
            v.push(x);
        }
        println!(
            "| {} {} | {:.4} | {:+.2} | {:.2} | {:.2} | {:+.2} | {:.2} |",
            id.1,
            id.0,
            (unpaired / 2.0).sqrt(),
            r_control,
            to_control,
            regression,
            corr(&bk, &hk),
            paired,
        );
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "\nmedian share of trials over {} rows: ratio to control {:.2}, regression on control {:.2}, paired {:.2}",
        shares[0].len(),
        med(&mut shares[0]),
        med(&mut shares[1]),
        med(&mut shares[2]),
    );
}
