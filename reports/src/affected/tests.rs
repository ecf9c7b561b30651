//! The rules of skipping, on identities made here (no GPU): equal identities skip and
//! name their run, a changed kernel or launch times, a toolchain change times all, the
//! audit takes its share, an autotuner's other choice is a drift.

use super::*;
use perfdb_ingest::kernel_identity::launches::Choice;
use perfdb_ingest::kernel_identity::rows::{Attribution, Identities, KernelUse, RowIdentity};
use std::collections::BTreeMap;

fn use_of(kernel: &str, code: &str, launch: &str) -> KernelUse {
    KernelUse {
        kernel: kernel.to_string(),
        code: code.to_string(),
        source: Some(format!("src-{kernel}")),
        launch: launch.to_string(),
        num_warps: Some(4),
        num_stages: Some(3),
        grid: vec![1024],
    }
}

fn row(table: &str, n: usize, kernels: Vec<KernelUse>, run: Option<&str>) -> RowIdentity {
    let identity = (!kernels.is_empty()).then(|| {
        kernels
            .iter()
            .map(|k| format!("{}{}{}", k.kernel, k.code, k.launch))
            .collect::<String>()
    });
    RowIdentity {
        table: table.to_string(),
        variant: "triton".to_string(),
        key: format!("{{\"n\":\"{n}\"}}"),
        key_text: format!("n={n}"),
        identity,
        kernels,
        measured_in: run.map(str::to_string),
    }
}

fn ids(rows: Vec<RowIdentity>) -> Identities {
    Identities {
        toolchain: BTreeMap::from([
            ("triton".to_string(), "3.6.0".to_string()),
            ("driver".to_string(), "580.159.04".to_string()),
        ]),
        attribution: Attribution::PerRow,
        rows,
        autotune: Vec::new(),
        row_seconds: None,
    }
}

#[test]
fn equal_identity_skips_and_names_the_run_it_fills_from() {
    let base = ids(vec![
        row(
            "add",
            1,
            vec![use_of("add_kernel", "c1", "l1")],
            Some("n@c1"),
        ),
        row(
            "softmax",
            1,
            vec![use_of("softmax_kernel", "c2", "l2")],
            Some("R0"),
        ),
    ]);
    let head = ids(vec![
        row("add", 1, vec![use_of("add_kernel", "c1", "l1")], None),
        row(
            "softmax",
            1,
            vec![use_of("softmax_kernel", "c9", "l2")],
            None,
        ),
        row("matmul", 1, vec![use_of("matmul_kernel", "c3", "l3")], None),
    ]);
    let p = plan(Some(&base), &head, 0.0, "seed", false);
    assert_eq!(p.forced, None);
    assert!(matches!(&p.rows[0].action, Action::Skip { run, .. } if run == "n@c1"));
    assert_eq!(
        p.rows[1].action,
        Action::Time(Why::Changed {
            kernels: vec!["softmax_kernel".to_string()]
        })
    );
    assert_eq!(p.rows[2].action, Action::Time(Why::New));
    // A launch change (same code, another grid or argument) is a change too.
    let head = ids(vec![row(
        "add",
        1,
        vec![use_of("add_kernel", "c1", "l9")],
        None,
    )]);
    assert!(matches!(
        plan(Some(&base), &head, 0.0, "s", false).rows[0].action,
        Action::Time(Why::Changed { .. })
    ));
}

#[test]
fn a_row_with_no_triton_kernel_or_no_base_result_is_timed() {
    let base = ids(vec![
        row("torch_only", 1, vec![], Some("n@c1")),
        row("add", 1, vec![use_of("add_kernel", "c1", "l1")], None),
    ]);
    let head = ids(vec![
        row("torch_only", 1, vec![], None),
        row("add", 1, vec![use_of("add_kernel", "c1", "l1")], None),
    ]);
    let p = plan(Some(&base), &head, 0.0, "s", false);
    assert_eq!(p.rows[0].action, Action::Time(Why::NoIdentity));
    assert_eq!(p.rows[1].action, Action::Time(Why::BaseUnmeasured));
}

#[test]
fn a_toolchain_or_device_change_or_no_base_record_times_every_row() {
    let base = ids(vec![row(
        "add",
        1,
        vec![use_of("add_kernel", "c1", "l1")],
        Some("n@c1"),
    )]);
    let mut head = ids(vec![row(
        "add",
        1,
        vec![use_of("add_kernel", "c1", "l1")],
        None,
    )]);
    head.toolchain
        .insert("driver".to_string(), "590.1".to_string());
    let p = plan(Some(&base), &head, 0.0, "s", false);
    assert_eq!(
        p.forced.as_deref(),
        Some("the toolchain changed: driver 580.159.04 -> 590.1")
    );
    assert_eq!(p.rows[0].action, Action::Time(Why::Forced));
    head.toolchain.remove("driver");
    head.toolchain
        .insert("device".to_string(), "NVIDIA H200".to_string());
    let p = plan(Some(&base), &head, 0.0, "s", false);
    assert!(p.forced.unwrap().contains("device (none) -> NVIDIA H200"));
    let p = plan(None, &head, 0.0, "s", false);
    assert_eq!(p.forced.as_deref(), Some("the base has no identity record"));
    assert_eq!(p.timed().count(), 1);
}

#[test]
fn the_audit_times_its_share_of_unchanged_rows_and_the_same_ones_for_a_seed() {
    // One changed row: the run times anyway, so each unchanged row draws on its own.
    let rows = |run: Option<&str>, code: &str| {
        let mut v: Vec<RowIdentity> = (0..2000)
            .map(|n| row("add", n, vec![use_of("add_kernel", "c1", "l1")], run))
            .collect();
        v.push(row(
            "softmax",
            0,
            vec![use_of("softmax_kernel", code, "l")],
            run,
        ));
        v
    };
    let (base, head) = (ids(rows(Some("n@c1"), "old")), ids(rows(None, "new")));
    let p = plan(Some(&base), &head, 0.05, "commit-a", false);
    let audited = p.timed().count() - 1;
    // 5% of 2000 is 100; binomial sd ~9.7.
    assert!((70..=130).contains(&audited), "{audited}");
    assert!(p
        .timed()
        .filter(|t| t.row.table == "add")
        .all(|t| matches!(&t.action, Action::Time(Why::Audit { run, .. }) if run == "n@c1")));
    assert_eq!(plan(Some(&base), &head, 0.05, "commit-a", false), p);
    let other = plan(Some(&base), &head, 0.05, "commit-b", false);
    assert_ne!(other, p, "another seed audits other rows");
    assert_eq!(
        plan(Some(&base), &head, 0.0, "commit-a", false)
            .timed()
            .count(),
        1
    );
    assert_eq!(
        plan(Some(&base), &head, 1.0, "commit-a", false)
            .skipped()
            .count(),
        0
    );
}

#[test]
fn with_nothing_else_to_time_the_rows_are_audited_together_on_their_share_of_runs() {
    let rows = |run: Option<&str>| {
        (0..20)
            .map(|n| row("add", n, vec![use_of("add_kernel", "c1", "l1")], run))
            .collect::<Vec<_>>()
    };
    let (base, head) = (ids(rows(Some("n@c1"))), ids(rows(None)));
    let mut audited_runs = 0;
    for seed in 0..2000 {
        let p = plan(Some(&base), &head, 0.05, &format!("commit-{seed}"), false);
        match p.timed().count() {
            0 => {}
            20 => audited_runs += 1,
            n => panic!("{n} of 20 rows audited: all or none"),
        }
    }
    assert!((70..=130).contains(&audited_runs), "{audited_runs}");
}

#[test]
fn another_autotune_winner_with_the_same_source_is_config_drift_not_timed() {
    let four = KernelUse {
        num_warps: Some(4),
        ..use_of("tuned_add_kernel", "w4", "l1")
    };
    let eight = KernelUse {
        num_warps: Some(8),
        ..use_of("tuned_add_kernel", "w8", "l8")
    };
    // As Triton prints a config; one autotuner tunes a key a shape, so a pass holds a
    // choice a key (here 4 warps for one shape, 8 for another, in both passes).
    let config =
        |w: u32| format!("BLOCK: 1024, num_warps: {w}, num_ctas: 1, num_stages: 3, maxnreg: None");
    let choice = |w: u32| Choice {
        kernel: "tuned_add_kernel".to_string(),
        key: Vec::new(),
        winner: config(w),
        configs: vec![config(4), config(8)],
    };
    let mut base = ids(vec![row("tuned_add", 1, vec![four], Some("n@c1"))]);
    base.autotune = vec![choice(4), choice(8)];
    let mut head = ids(vec![row("tuned_add", 1, vec![eight.clone()], None)]);
    head.autotune = vec![choice(4), choice(8)];
    assert_eq!(
        plan(Some(&base), &head, 0.0, "s", false).rows[0].action,
        Action::Drift {
            run: "n@c1".to_string(),
            kernel: "tuned_add_kernel".to_string(),
            from: config(4),
            to: config(8),
        }
    );
    // Not timed, and counted so.
    assert_eq!(plan(Some(&base), &head, 0.0, "s", false).timed().count(), 0);
    // --time-drift times it, said as the drift it is.
    assert_eq!(
        plan(Some(&base), &head, 0.0, "s", true).rows[0].action,
        Action::Time(Why::ConfigDrift {
            kernel: "tuned_add_kernel".to_string(),
            from: config(4),
            to: config(8),
        })
    );
    // A candidate added: the config set changed, timed.
    head.autotune[0]
        .configs
        .push("BLOCK: 2048, num_warps: 8".to_string());
    assert!(matches!(
        plan(Some(&base), &head, 0.0, "s", false).rows[0].action,
        Action::Time(Why::ConfigSetChanged { .. })
    ));
    // Another source: a code change, whatever the autotuner chose.
    head.autotune = vec![choice(4), choice(8)];
    head.rows[0].kernels[0].source = Some("edited".to_string());
    assert!(matches!(
        plan(Some(&base), &head, 0.0, "s", false).rows[0].action,
        Action::Time(Why::Changed { .. })
    ));
    // Another source (a comment) whose code for the chosen config the base compiled
    // too (another row launched 8 warps there): the code did not change, a drift.
    let mut with_eight = base.clone();
    with_eight
        .rows
        .push(row("tuned_add", 2, vec![eight.clone()], Some("n@c1")));
    assert!(matches!(
        plan(Some(&with_eight), &head, 0.0, "s", false).rows[0].action,
        Action::Drift { .. }
    ));
    // Another grid: a launch change.
    head.rows[0].kernels[0].source = base.rows[0].kernels[0].source.clone();
    head.rows[0].kernels[0].grid = vec![2048];
    assert!(matches!(
        plan(Some(&base), &head, 0.0, "s", false).rows[0].action,
        Action::Time(Why::Changed { .. })
    ));
}
