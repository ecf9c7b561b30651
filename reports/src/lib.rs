//! perfdb-reports: everything perfdb says about what the warehouse holds.
//!
//! The modules are stages, each built on those before it (the order is checked by
//! `scripts/check-structure`): leaves first ([`fmt`], [`json`], [`par`], [`git`],
//! [`stats`]), then the warehouse read through DuckDB ([`db`], [`environment`]), the
//! comparison of two sides ([`compare`]: select, load, match, pair, decide, verdict) and
//! what is built on it (`perfdb sql` in [`query`], the sequential A/B in [`ab`], the
//! search for a culprit in [`bisect`]), the history's alerts ([`alerts`], [`detect`]),
//! charts ([`chart`]), the configuration file ([`config`]), noise and overviews
//! ([`noise`], [`overview`]), and last the renderers ([`render`]) and saved comparisons
//! ([`saved`]). docs/architecture.md maps every file.

pub mod ab;
pub mod affected;
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
