//! Every reference value of docs/STATS.md, to 1e-12 where exact.
// Reference values are copied verbatim from docs/STATS.md, digits and all.
#![allow(clippy::excessive_precision)]

use super::*;

fn close(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "got {got:.17}, want {want:.17} (tol {tol:e})"
    );
}

#[test]
fn mann_whitney_exact_reference_values() {
    let mw = mann_whitney(&[2., 1., 3., 5.], &[12., 11., 13., 15.]);
    assert_eq!(mw.u, 0.0);
    assert!(mw.exact);
    close(mw.p, 0.028571428571428577, 1e-12);

    let mw = mann_whitney(&[2., 1., 3., 5.], &[0., 4., 6., 7.]);
    assert_eq!(mw.u, 5.0);
    close(mw.p, 0.48571428571428577, 1e-12);

    let mw = mann_whitney(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]);
    close(mw.p, 0.007936507936507936, 1e-12);
}

/// Found by the property test (`tests/stats_props.rs`): with ties and unequal sizes the
/// exact distribution followed assignments with more second-sample values than exist,
/// past the end of its table (a panic). Enumerated by hand: of the 6 ways to leave one
/// of {0,0,0,0,1,1} out as the second sample, 4 give U = 3.5 and 2 give U = 0.5.
#[test]
fn mann_whitney_exact_with_ties_and_unequal_sizes() {
    let mw = mann_whitney(&[0., 0., 1., 0., 1.], &[0.]);
    assert!(mw.exact);
    assert_eq!(mw.u, 3.5);
    close(mw.p_less, 1.0, 1e-12);
    close(mw.p_greater, 4.0 / 6.0, 1e-12);
    close(mw.p, 1.0, 1e-12);
}

#[test]
fn mann_whitney_ties_reference_values() {
    let a = [2., 1., 3., 5.];
    let b = [2., 2., 2., 2.];
    close(mann_whitney(&a, &b).p, 0.7142857142857143, 1e-12);
    // Normal approximations: statrs' erfc differs from scipy's in the 12th digit.
    close(mann_whitney_normal(&a, &b), 0.6198391186854187, 1e-10);

    let mw = mann_whitney(&[2., 1., 3., 5.], &[1., 1., 1., 1., 1.]);
    assert_eq!(mw.u, 17.5);
    close(mw.p_greater, 0.047619047619047616, 1e-12);
    close(mw.p, 0.09523809523809523, 1e-12);

    let mw = mann_whitney(&[10., 10., 10.5, 10.5, 10.5], &[11., 11., 11.5, 11.5, 11.5]);
    close(mw.p, 0.007936507936507936, 1e-12);

    let a = [10., 10.5, 10.5, 11., 11.];
    let b = [10.5, 11., 11.5, 11.5, 12.];
    let mw = mann_whitney(&a, &b);
    assert_eq!(mw.u, 4.0);
    close(mw.p, 0.1111111111111111, 1e-12);
    close(mann_whitney_normal(&a, &b), 0.08567343955231686, 1e-10);
}

#[test]
fn mann_whitney_unequal_sizes_both_orders() {
    let a = [19., 22., 16., 29., 24.];
    let b = [20., 11., 17., 12.];
    let mw = mann_whitney(&a, &b);
    assert_eq!(mw.u, 17.0);
    close(mw.p, 0.1111111111111111, 1e-12);
    close(mann_whitney(&b, &a).p, 0.1111111111111111, 1e-12);
    // statrs 0.19.1's exact path returns p = 1.0 for [1..5] vs [6..10]; ours does not.
    close(
        mann_whitney(&[6., 7., 8., 9., 10.], &[1., 2., 3., 4., 5.]).p,
        0.007936507936507936,
        1e-12,
    );
}

#[test]
fn mann_whitney_normal_approximation_for_large_samples() {
    let a: Vec<f64> = (0..500).map(|i| (2 * i) as f64).collect();
    let b: Vec<f64> = (0..600).map(|i| (-41 + 2 * i) as f64).collect();
    let mw = mann_whitney(&a, &b);
    assert!(!mw.exact);
    close(mw.p, 0.0049335360814172224, 1e-10);
}

#[test]
fn smallest_attainable_p() {
    close(mw_min_p(3, 3), 0.1, 1e-15);
    close(mw_min_p(4, 4), 0.028571428571428571, 1e-15);
    close(mw_min_p(5, 5), 0.007936507936507936, 1e-15);
    assert_eq!(mw_trials_needed(0.05), 4);
}

#[test]
fn welch_reference_values() {
    let w = welch(&[2., 1., 3., 4.], &[6., 5., 7., 9.]);
    close(w.t, -3.9703446152237674, 1e-12);
    close(w.df, 5.584615384615385, 1e-12);
    close(w.p, 0.0085128631313781695, 1e-12);

    let w = welch_log(&[97.6, 97.4, 98.05], &[32.58, 32.41, 32.77]);
    close(w.t, 292.93535549599676, 1e-9);
    close(w.df, 3.3280694064115406, 1e-12);
    close(w.p, 1.853548208326687e-08, 1e-18);
}

#[test]
fn welch_zero_variance() {
    assert_eq!(welch(&[1., 1., 1.], &[1., 1., 1.]).p, 1.0);
    assert_eq!(welch(&[1., 1., 1.], &[2., 2., 2.]).p, 0.0);
}

#[test]
fn benjamini_hochberg_reference() {
    let p = [
        0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
        0.5719, 0.6528, 0.7590, 1.0,
    ];
    let want = [
        0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.063857, 0.063857, 0.0645, 0.0765, 0.486,
        0.581182, 0.714875, 0.753231, 0.813214, 1.0,
    ];
    let q = benjamini_hochberg(&p);
    for (g, w) in q.iter().zip(want) {
        close(*g, w, 1e-6);
    }
    assert_eq!(q.iter().filter(|q| **q <= 0.05).count(), 4);
}

#[test]
fn geomean_t_interval_reference() {
    let (g, ci) = geomean_t_ci(&[0.95, 1.02, 1.10, 0.98]);
    close(g, 1.010964, 1e-6);
    let (lo, hi) = ci.unwrap();
    close(lo, 0.914023, 1e-6);
    close(hi, 1.118187, 1e-6);
}

#[test]
fn median_ci_order_statistics_as_benchstat() {
    for (n, want) in [
        (5, (0, 5)),
        (6, (1, 6)),
        (8, (1, 7)),
        (10, (2, 9)),
        (20, (6, 15)),
        (30, (10, 21)),
    ] {
        assert_eq!(median_ci_indices(n, CONFIDENCE), want, "n = {n}");
    }
    let (lo, hi) = median_ci(&[5., 1., 4., 2., 3.]);
    assert_eq!((lo, hi), (f64::NEG_INFINITY, 5.0));
}

#[test]
fn benchstat_end_to_end_example() {
    let old_json = [
        1726., 1723., 1707., 1707., 1713., 1729., 1736., 1707., 1705., 1774.,
    ];
    let new_json = [
        1423., 1416., 1411., 1413., 1412., 1426., 1422., 1424., 1447., 1425.,
    ];
    let old_gob = [
        3069., 3075., 3069., 3067., 3207., 3064., 3064., 3058., 3059., 3062.,
    ];
    let new_gob = [
        3075., 3065., 3059., 3065., 3060., 3081., 3186., 3135., 3087., 3062.,
    ];
    assert_eq!(median(&old_json), 1718.0);
    assert_eq!(median(&new_json), 1422.5);
    close(median(&new_json) / median(&old_json) - 1.0, -0.1720, 5e-5);
    close(mann_whitney(&new_json, &old_json).p, 1.0825e-5, 5e-9);
    assert_eq!(median(&old_gob), 3065.5);
    assert_eq!(median(&new_gob), 3070.0);
    close(
        mann_whitney(&new_gob, &old_gob).p,
        0.4461018857303687,
        1e-12,
    );
    let r1 = median(&new_json) / median(&old_json);
    let r2 = median(&new_gob) / median(&old_gob);
    close((r1 * r2).sqrt() - 1.0, -0.0894, 5e-5);
}

#[test]
fn bootstrap_is_reproducible_and_brackets_the_estimate() {
    let rows = vec![
        (vec![10., 10.2, 9.9, 10.1], vec![11., 11.1, 10.9, 11.2]),
        (vec![20., 20.5, 19.8], vec![20.1, 20.3, 19.9]),
    ];
    let a = bootstrap_geomean_ci(&rows, Statistic::Median).unwrap();
    let b = bootstrap_geomean_ci(&rows, Statistic::Median).unwrap();
    assert_eq!(a, b);
    let point = ((median(&rows[0].1) / median(&rows[0].0))
        * (median(&rows[1].1) / median(&rows[1].0)))
    .sqrt();
    assert!(a.0 <= point && point <= a.1, "{a:?} vs {point}");
}

#[test]
fn geomean_ratio_interval_brackets_the_ratio() {
    let head = [97.6, 97.4, 98.05];
    let base = [32.58, 32.41, 32.77];
    let (lo, hi) = geomean_ratio_ci(&head, &base).unwrap();
    let g = |x: &[f64]| (x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64).exp();
    let point = g(&head) / g(&base);
    assert!(lo < point && point < hi, "{lo} {point} {hi}");
    assert!(
        hi / lo < 1.03,
        "3 tight trials give a tight interval: {lo} {hi}"
    );
    assert_eq!(geomean_ratio_ci(&[1.0], &[1.0, 2.0]), None);
    assert_eq!(geomean_ratio_ci(&[2.0, 2.0], &[1.0, 1.0]), Some((2.0, 2.0)));
}

/// The tabulated draw is exact: for small n, enumerate all n^n resamples (as places of
/// the sorted sample) and count each statistic's pair of places.
#[test]
fn index_draw_tables_are_the_exact_resampling_distribution() {
    for n in 1..=6usize {
        for stat in [Statistic::Median, Statistic::Min] {
            let mut exact: std::collections::HashMap<(usize, usize), f64> = Default::default();
            let total = n.pow(n as u32);
            for code in 0..total {
                let mut places: Vec<usize> = (0..n).map(|d| code / n.pow(d as u32) % n).collect();
                places.sort_unstable();
                let pair = match stat {
                    Statistic::Min => (places[0], places[0]),
                    Statistic::Median if n % 2 == 1 => (places[n / 2], places[n / 2]),
                    Statistic::Median => (places[n / 2 - 1], places[n / 2]),
                };
                *exact.entry(pair).or_default() += 1.0 / total as f64;
            }
            let table = IndexDraw::new(n, stat);
            // Draws (through the alias table) land on each pair as often as it is likely.
            let mut rng = SplitMix64::new(3);
            let mut seen: std::collections::HashMap<(usize, usize), f64> = Default::default();
            let draws = 100_000;
            for _ in 0..draws {
                *seen.entry(table.draw(&mut rng)).or_default() += 1.0 / draws as f64;
            }
            for (pair, p) in &exact {
                close(seen.get(pair).copied().unwrap_or(0.0), *p, 0.01);
            }
            let outcomes = table.outcomes();
            assert_eq!(outcomes.len(), exact.len(), "n = {n} {stat:?}");
            for (pair, p) in outcomes {
                close(p, exact[&pair], 1e-12);
            }
        }
    }
    // Larger n: the probabilities still sum to one and none is negative (cancellation
    // in the differences stays far below what a draw resolves).
    for n in [15, 16, 63, 64] {
        for stat in [Statistic::Median, Statistic::Min] {
            let outcomes = IndexDraw::new(n, stat).outcomes();
            assert!(outcomes.iter().all(|(_, p)| *p >= 0.0));
            close(outcomes.iter().map(|(_, p)| p).sum::<f64>(), 1.0, 1e-9);
            // The table's mean statistic is that of the Beta draws.
            let data: Vec<f64> = (0..n).map(|i| (i * i) as f64).collect();
            let exact: f64 = outcomes
                .iter()
                .map(|((lo, hi), p)| p * (data[*lo] + data[*hi]) / 2.0)
                .sum();
            let mut rng = SplitMix64::new(7);
            let draws = 200_000;
            let beta = (0..draws)
                .map(|_| bootstrap_statistic(&data, stat, &mut rng))
                .sum::<f64>()
                / draws as f64;
            close(exact, beta, 0.01 * data[n / 2].max(1.0));
        }
    }
}

/// The direct draw of a resample's median (or min) has the distribution of the median of
/// an explicit resample: compare the two by their means and quantiles over many draws.
#[test]
fn order_statistic_draws_match_explicit_resampling() {
    let odd: Vec<f64> = vec![1.0, 2.0, 2.0, 5.0, 7.0, 8.0, 13.0];
    let even: Vec<f64> = vec![3.0, 4.0, 9.0, 10.0, 10.0, 12.0];
    for (data, stat) in [
        (&odd, Statistic::Median),
        (&even, Statistic::Median),
        (&odd, Statistic::Min),
    ] {
        let n_draws = 200_000;
        let mut rng = SplitMix64::new(1);
        let mut direct: Vec<f64> = (0..n_draws)
            .map(|_| bootstrap_statistic(data, stat, &mut rng))
            .collect();
        let mut rng = SplitMix64::new(2);
        let mut explicit: Vec<f64> = (0..n_draws)
            .map(|_| {
                let mut s: Vec<f64> = (0..data.len())
                    .map(|_| data[rng.below(data.len())])
                    .collect();
                match stat {
                    Statistic::Median => median_in_place(&mut s),
                    Statistic::Min => s.iter().copied().fold(f64::MAX, f64::min),
                }
            })
            .collect();
        close(mean(&direct), mean(&explicit), 0.02 * mean(&explicit));
        direct.sort_by(f64::total_cmp);
        explicit.sort_by(f64::total_cmp);
        // The two empirical CDFs agree at every value either produced.
        let cdf = |xs: &[f64], v: f64| xs.partition_point(|x| *x <= v) as f64 / xs.len() as f64;
        for v in direct.iter().chain(&explicit).step_by(997) {
            let (a, b) = (cdf(&direct, *v), cdf(&explicit, *v));
            assert!(
                (a - b).abs() < 0.01,
                "{stat:?} of {data:?}: CDF at {v}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn attainable_minimum_follows_the_ties() {
    // 5 a side: without ties the U test reaches 2/C(10,5) = 0.0079; with these ties the
    // rarest outcome has probability C(8,4)/C(10,5) = 70/252 each way, so p >= 5/9.
    assert!(mw_min_p(5, 5) < 0.05);
    let (a, b) = ([1., 2., 2., 2., 3.], [2., 2., 2., 2., 2.]);
    close(mw_min_p_given(&a, &b), 0.5555555555555556, 1e-12);
    // The exact p of any outcome with that tie pattern is at least that.
    assert!(mann_whitney(&a, &b).p >= 0.5555555555555556 - 1e-12);
    close(
        mw_min_p_given(&[1., 1., 1., 1., 1.], &[1., 1., 1., 1., 2.]),
        1.0,
        1e-12,
    );
    // Without ties it is the sizes' bound.
    close(
        mw_min_p_given(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]),
        0.007936507936507936,
        1e-12,
    );
}

#[test]
fn normal_approximation_at_the_centre_is_one() {
    // 60 a side with equal ranks: U = mu; no continuity correction at the centre.
    let x: Vec<f64> = (1..=60).map(f64::from).collect();
    let mw = mann_whitney(&x, &x);
    assert!(!mw.exact);
    assert_eq!(mw.u, 1800.0);
    assert_eq!(mw.p, 1.0);
}
