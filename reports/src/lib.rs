//! perfdb-reports: reading the warehouse (DuckDB), statistics, comparison, and rendering.

pub mod alerts;
pub mod chart;
pub mod compare;
pub mod config;
pub mod db;
pub mod detect;
pub mod notify;
pub mod render;
pub mod stats;
pub mod table;
pub mod triage;
pub mod vkpr;
