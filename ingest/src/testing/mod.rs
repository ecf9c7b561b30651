//! Helpers the tests of every crate share, behind the `testing` feature (and `cfg(test)`):
//! never part of perfdb itself.
//! - [`roundtrip`]: what any input must satisfy (the fuzz targets' and replays' checks).
//! - [`stores`]: the object stores on loopback that `scripts/test` starts.

pub mod roundtrip;
pub mod stores;
