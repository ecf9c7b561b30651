pub mod alerts;
pub mod chart;
pub mod compare;
pub mod devices;
pub mod history;
pub mod overview;
pub mod roofline;
pub mod runs;
