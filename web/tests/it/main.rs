//! The web app over real warehouses: one test binary, a module a subject.

mod common;

mod hostile;
mod routes;
mod serving;
