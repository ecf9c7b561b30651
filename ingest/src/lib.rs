//! perfdb-ingest: ingest = formats + warehouse.
//!
//! Every other perfdb crate depends on this one. Its two halves never meet but here:
//! - [`formats`]: text in, canonical records out ([`model`]); one parser per input
//!   format, auto-detection, and nothing that writes.
//! - [`warehouse`]: the Parquet warehouse (its one Arrow schema, layout, commits,
//!   compaction, summaries) over the Delta log protocol ([`delta`], a leaf).
//! - [`pipeline`]: the ingest step that joins them: files -> parse -> prepare -> commit.
//!
//! [`devices`] holds the device table (peaks) that runs are held against at ingest and
//! in every report. [`hash`] holds the hashes both halves use. With the `testing` feature, [`testing`]
//! holds the helpers the tests of every crate share (object stores, round trips).

pub mod call_energy;
pub mod delta;
pub mod devices;
pub mod formats;
pub mod gpu_state;
pub mod hash;
pub mod kernel_identity;
pub mod model;
pub mod pipeline;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod timing;
pub mod trial_energy;
pub mod warehouse;

pub use pipeline::{
    expand_inputs, ingest_bytes, ingest_files, ingest_prepared, prepare_bytes, prepare_file,
    prepare_files, FileError, FileReport, Ingested, NO_FORMAT,
};
