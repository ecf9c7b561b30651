//! One alert in full: the alert, what changed underneath its step, the counters that
//! moved, the same shape's other variants, how to confirm it and what `perfdb bisect`
//! found. One type built by one function ([`detail`]); `perfdb alerts show` (text and
//! JSON) and the alert's page read it.

use super::beside::{self, Beside};
use super::confirm::{confirmation, ConfirmError, Confirmation};
use super::AlertView;
use crate::bisect::Bisected;
use crate::compare::counters::Explained;
use crate::db::Db;
use crate::environment::Underneath;
use serde::Serialize;
use std::path::Path;

/// An alert and everything read beside it. Its JSON is the alert's own fields, then
/// `underneath`, and the others when there is something to say.
#[derive(Debug, Serialize)]
pub struct AlertDetail {
    #[serde(flatten)]
    pub alert: AlertView,
    /// What changed underneath its step (driver, toolchain, image...).
    pub underneath: Underneath,
    /// The hardware counters that moved across its step, when both commits were profiled.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<Explained>,
    /// The same shape's other variants across the same step (the control among them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<Beside>,
    /// How to confirm it (the range, `perfdb ab`, a bisect plan); none when its commits
    /// cannot be named in a command ([`AlertDetail::unconfirmable`] says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirmation>,
    /// Why no confirmation is given: an alert stored before commit names were checked.
    #[serde(skip)]
    pub unconfirmable: Option<String>,
    /// What `perfdb bisect` found for it, kept in the warehouse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<Bisected>,
    /// A bisect record kept for it that cannot be read (cut short, another version's):
    /// said, never shown as "not bisected".
    #[serde(skip)]
    pub unreadable_bisect: Option<String>,
}

/// Why an alert's detail could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DetailError {
    #[error(transparent)]
    Confirm(#[from] ConfirmError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error(transparent)]
    Counters(#[from] crate::compare::CompareError),
}

/// Everything read beside `alert` in the warehouse at `root` (`git_dir`: a repository
/// whose log names the commits nobody measured, for the confirmation's range).
pub fn detail(
    db: &Db,
    root: &Path,
    alert: AlertView,
    git_dir: Option<&Path>,
) -> Result<AlertDetail, DetailError> {
    let (confirm, unconfirmable) = match confirmation(db, &alert, git_dir) {
        Ok(c) => (Some(c), None),
        Err(e @ ConfirmError::Commit { .. }) => (None, Some(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let (bisect, unreadable_bisect) = match crate::bisect::store::load(root, &alert.id) {
        Ok(b) => (b, None),
        Err(e) => (None, Some(e)),
    };
    Ok(AlertDetail {
        underneath: beside::underneath(db, &alert)?,
        counters: beside::counters(db, &alert)?,
        beside: beside::beside(db, &alert)?,
        confirm,
        unconfirmable,
        bisect,
        unreadable_bisect,
        alert,
    })
}
