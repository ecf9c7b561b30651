//! Alerts from their storing on: reading them ([`store`]: every reader of alerts uses
//! its `list`, `find` and `AlertView`), the groups one change raises ([`group`]), the
//! status changes people make ([`triage`]), their delivery ([`notify`]), how to
//! confirm one ([`confirm`]: the range, `perfdb ab`, a bisect plan), and one alert in
//! full ([`detail`]: what `alerts show` and the alert's page read).

pub mod beside;
pub mod confirm;
pub mod detail;
pub mod group;
pub mod notify;
pub mod store;
pub mod triage;

pub use detail::{detail, AlertDetail, DetailError};
pub use group::{find_group, group, AlertGroup};
pub use store::{find, list, AlertKind, AlertView, Moved, TriageError};
pub use triage::{act, act_on_group, Action};
