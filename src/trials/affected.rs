//! `ab --affected`: an identity pass of each arm before any trial (docs/affected.md).
//! Rows whose identities are equal in both arms are not timed; the others (and any row
//! without an identity) are named to every trial through PERFDB_AFFECTED. When none
//! differs, no trial runs. An arm whose identity pass gives none, or a toolchain that
//! differs between the arms, times every row.

use super::session::Session;
use crate::identity::{identity_pass, same_code, selection_file, selection_helper, Reading};
use perfdb_ingest::kernel_identity::rows::{Identities, RowIdentity};
use perfdb_reports::ab::Arm;

/// What the identity passes leave the trials.
pub enum Affected {
    Interrupted,
    /// Every row's identity is the same in both arms: what to say; no trial runs.
    Nothing(String),
    /// The environment of every trial (empty: every row is timed) and the rows not timed.
    Rows {
        env: Vec<(String, String)>,
        /// The folder of the selection helper, for the trials' PYTHONPATH.
        python: Option<std::path::PathBuf>,
        same: Vec<String>,
    },
}

/// Each arm's identities, or why one has none.
fn both(s: &Session) -> anyhow::Result<Option<Result<[Identities; 2], String>>> {
    let mut got = Vec::new();
    for arm in [Arm::Base, Arm::Head] {
        let (words, dir, env) = s.arms.parts(arm);
        let reading = Reading {
            name: "identity pass",
            format: s.format,
            meta: &s.metas[arm.index()],
            devices: &s.devices,
        };
        say!("ab: identity pass of the {} arm", arm.name());
        let Some(pass) = identity_pass(&words, dir.as_deref(), &env, &reading)? else {
            return Ok(None);
        };
        match pass.ids {
            Ok(ids) => got.push(ids),
            Err(why) => return Ok(Some(Err(format!("the {} arm: {why}", arm.name())))),
        }
    }
    let head = got.pop().expect("two arms");
    let base = got.pop().expect("two arms");
    Ok(Some(Ok([base, head])))
}

pub fn plan(s: &Session) -> anyhow::Result<Affected> {
    let [base, head] = match both(s)? {
        None => return Ok(Affected::Interrupted),
        Some(Err(why)) => {
            say!("ab: {why}: every row is timed");
            return Ok(Affected::Rows {
                env: Vec::new(),
                python: None,
                same: Vec::new(),
            });
        }
        Some(Ok(ids)) => ids,
    };
    if base.toolchain != head.toolchain {
        let changes = perfdb_reports::affected::toolchain_changes(&base, &head);
        say!(
            "ab: the arms' toolchains differ ({}): every row is timed",
            changes.join(", ")
        );
        return Ok(Affected::Rows {
            env: Vec::new(),
            python: None,
            same: Vec::new(),
        });
    }
    if same_code(&base, &head) {
        return Ok(Affected::Nothing(format!(
            "not timed: all {} row(s) are unchanged, their identities equal in both arms (the same compiled Triton kernels and launches, the same toolchain); no trial was run",
            head.rows.len()
        )));
    }
    let equal = |r: &RowIdentity| {
        r.identity.is_some() && base.row(r).is_some_and(|b| b.identity == r.identity)
    };
    let (same, timed): (Vec<&RowIdentity>, Vec<&RowIdentity>) =
        head.rows.iter().partition(|r| equal(r));
    let only_base = base.rows.iter().filter(|r| head.row(r).is_none());
    // Absolute: an arm runs in a folder of its own.
    let dir = std::fs::canonicalize(selection_helper(&s.logs.join("identity"))?)?;
    let file = selection_file(&dir, timed.iter().copied().chain(only_base))?;
    say!(
        "ab: {} row(s) timed, {} not timed (identity equal in both arms)",
        timed.len(),
        same.len()
    );
    Ok(Affected::Rows {
        env: vec![("PERFDB_AFFECTED".to_string(), file.display().to_string())],
        python: Some(dir),
        same: same.iter().map(|r| r.name()).collect(),
    })
}

/// [`plan`] applied to the session: the rows not timed, or how the experiment ends
/// before any trial.
pub fn apply(s: &mut Session) -> anyhow::Result<Result<Vec<String>, super::Ran>> {
    crate::process::catch_interrupts();
    Ok(match plan(s)? {
        Affected::Interrupted => Err(super::Ran::NotCompared(
            crate::Exit::Interrupted,
            "interrupted".to_string(),
        )),
        Affected::Nothing(what) => Err(super::Ran::Unchanged(what)),
        Affected::Rows { env, python, same } => {
            s.env.extend(env);
            s.python.extend(python);
            Ok(same)
        }
    })
}
