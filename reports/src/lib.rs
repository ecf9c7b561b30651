//! perfdb-reports: reading the warehouse (DuckDB), statistics, comparison, and rendering.

pub mod ab;
pub mod alerts;
pub mod bisect;
pub mod chart;
pub mod compare;
pub mod config;
pub mod db;
pub mod detect;
pub mod environment;
pub mod fmt;
pub mod git;
pub mod json;
pub mod noise;
pub mod overview;
pub mod par;
pub mod query;
pub mod render;
pub mod saved;
pub mod stats;
