//! perfdb-ingest against the file system and object stores: one test binary, a module a subject.

mod captures;
mod counters;
mod delta_object_store;
mod devices;
mod fixtures;
mod garbled;
mod kernel_identity;
mod roundtrip;
mod tuned_choices;
