//! The binary end to end: one test binary (one link of DuckDB), a module a subject.
//! Shared helpers in `common`; snapshots in `snapshots/`.

mod common;

mod ab_deadlines;
mod affected;
mod alert_groups;
mod alert_lifecycle;
mod architecture;
mod bisect;
mod bisect_ahead;
mod browser;
mod ci_recipes;
mod cli_ab;
mod cli_compare;
mod cli_compare_evidence;
mod cli_detect;
mod cli_help;
mod cli_ingest;
mod cli_query;
mod cli_run;
mod cli_serve;
mod cli_upkeep;
mod commit_names;
mod compare_files;
mod counters;
mod delta_readers;
mod demo;
mod detect_since;
mod drills;
mod energy;
mod energy_per_call;
mod export_roundtrip;
mod gpu_harness;
mod gpus;
mod impossible;
mod json_output;
mod json_reports;
mod malformed;
mod merge_base;
mod notify_https;
mod object_store_warehouse;
mod peaks;
mod profile_replay;
mod realworld;
mod stale_data;
mod summaries;
