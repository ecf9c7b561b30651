//! perfdb-reports: reading the warehouse (DuckDB), statistics, comparison, and rendering.

pub mod ab;
pub mod chart;
pub mod compare;
pub mod config;
pub mod confirm;
pub mod db;
pub mod detect;
pub mod fmt;
pub mod noise;
pub mod notify;
pub mod overview;
pub mod par;
pub mod render;
pub mod saved;
// The one module with unsafe code: DuckDB's C API, for the kind of a statement.
#[allow(unsafe_code)]
pub mod sql;
pub mod stats;
pub mod table;
pub mod triage;
