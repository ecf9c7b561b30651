//! Properties of the statistics, over generated inputs (proptest): Benjamini-Hochberg's
//! bounds and monotonicity, the exact Mann-Whitney U against enumeration for small
//! samples with ties, Welch's symmetry, the bootstrap's determinism, and the change-point
//! detector's invariance under shifting every (log) value, that is scaling the values.

use perfdb_reports::stats::changepoint::detect;
use perfdb_reports::stats::{
    benjamini_hochberg, bootstrap_geomean_ci, mann_whitney, welch, Statistic,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn bh_is_bounded_above_p_and_monotone(p in prop::collection::vec(0.0f64..=1.0, 1..60)) {
        let q = benjamini_hochberg(&p);
        prop_assert_eq!(q.len(), p.len());
        for i in 0..p.len() {
            prop_assert!((0.0..=1.0).contains(&q[i]), "q {} out of [0, 1]", q[i]);
            prop_assert!(q[i] >= p[i] - 1e-15, "q {} below p {}", q[i], p[i]);
            // Never more than Bonferroni.
            prop_assert!(q[i] <= (p[i] * p.len() as f64).min(1.0) + 1e-15);
            for j in 0..p.len() {
                if p[i] <= p[j] {
                    prop_assert!(q[i] <= q[j], "p {} <= {} but q {} > {}", p[i], p[j], q[i], q[j]);
                }
            }
        }
        if p.len() == 1 {
            prop_assert_eq!(q[0], p[0]);
        }
    }

    #[test]
    fn exact_u_matches_enumeration_with_ties(
        a in prop::collection::vec(0u8..5, 1..7),
        b in prop::collection::vec(0u8..5, 1..7),
    ) {
        let a: Vec<f64> = a.into_iter().map(f64::from).collect();
        let b: Vec<f64> = b.into_iter().map(f64::from).collect();
        let r = mann_whitney(&a, &b);
        prop_assert!(r.exact, "sizes {} and {} are within the exact limits", a.len(), b.len());
        // Every way of splitting the pooled values into a first sample of a.len().
        let pooled: Vec<f64> = a.iter().chain(&b).copied().collect();
        let n = pooled.len();
        let u_of = |mask: u32| {
            let mut u = 0.0;
            for i in (0..n).filter(|i| mask >> i & 1 == 1) {
                for j in (0..n).filter(|j| mask >> j & 1 == 0) {
                    u += if pooled[i] > pooled[j] { 1.0 } else if pooled[i] == pooled[j] { 0.5 } else { 0.0 };
                }
            }
            u
        };
        let us: Vec<f64> = (0u32..1 << n).filter(|m| m.count_ones() as usize == a.len()).map(u_of).collect();
        let total = us.len() as f64;
        let observed = u_of((1u32 << a.len()) - 1);
        prop_assert_eq!(r.u, observed);
        let less = us.iter().filter(|u| **u <= observed).count() as f64 / total;
        let greater = us.iter().filter(|u| **u >= observed).count() as f64 / total;
        prop_assert!((r.p_less - less).abs() < 1e-9, "P(U <= u) {} vs enumerated {}", r.p_less, less);
        prop_assert!((r.p_greater - greater).abs() < 1e-9, "P(U >= u) {} vs enumerated {}", r.p_greater, greater);
        prop_assert!((r.p - (2.0 * less.min(greater)).min(1.0)).abs() < 1e-9);
    }

    #[test]
    fn welch_is_symmetric(
        a in prop::collection::vec(-1e6f64..1e6, 2..30),
        b in prop::collection::vec(-1e6f64..1e6, 2..30),
    ) {
        let (ab, ba) = (welch(&a, &b), welch(&b, &a));
        prop_assert_eq!(ab.p, ba.p);
        prop_assert_eq!(ab.t, -ba.t);
        prop_assert_eq!(ab.df, ba.df);
        prop_assert!((0.0..=1.0).contains(&ab.p));
    }

    #[test]
    fn bootstrap_is_deterministic_and_ignores_trial_order(
        rows in prop::collection::vec(
            (prop::collection::vec(1.0f64..100.0, 1..8), prop::collection::vec(1.0f64..100.0, 1..8)),
            1..6,
        ),
        median in any::<bool>(),
    ) {
        let stat = if median { Statistic::Median } else { Statistic::Min };
        let once = bootstrap_geomean_ci(&rows, stat);
        prop_assert_eq!(once, bootstrap_geomean_ci(&rows, stat));
        let reversed: Vec<(Vec<f64>, Vec<f64>)> = rows
            .iter()
            .map(|(b, h)| (b.iter().rev().copied().collect(), h.iter().rev().copied().collect()))
            .collect();
        prop_assert_eq!(once, bootstrap_geomean_ci(&reversed, stat));
        let (lo, hi) = once.unwrap();
        prop_assert!(lo <= hi && lo > 0.0);
    }

    #[test]
    fn change_points_do_not_move_when_every_value_is_scaled(
        levels in prop::collection::vec((50.0f64..200.0, 2usize..6), 1..5),
        noise in prop::collection::vec(-0.01f64..0.01, 300),
        scale_exp in -20i32..20,
    ) {
        // A series of flat levels, three trials a commit, 1% noise.
        let mut series = Vec::new();
        let mut k = 0;
        for (level, commits) in &levels {
            for _ in 0..*commits {
                series.push((0..3).map(|_| { k += 1; level * (1.0 + noise[k % noise.len()]) }).collect::<Vec<f64>>());
            }
        }
        let scale = 2f64.powi(scale_exp);
        let scaled: Vec<Vec<f64>> = series.iter().map(|t| t.iter().map(|v| v * scale).collect()).collect();
        let (a, b) = (detect(&series), detect(&scaled));
        let at = |c: &[perfdb_reports::stats::changepoint::ChangePoint]| c.iter().map(|c| c.index).collect::<Vec<_>>();
        prop_assert_eq!(at(&a), at(&b));
        for (x, y) in a.iter().zip(&b) {
            prop_assert!((x.ratio - y.ratio).abs() <= 1e-9 * x.ratio);
            prop_assert!((x.p - y.p).abs() <= 1e-6 * x.p.max(1e-300) + 1e-300);
        }
    }
}
