//! `perfdb sql` and `perfdb runs`: a query over the warehouse ([`sql`]: read-only unless
//! asked) and its result as a table, CSV or JSON ([`table`]); a label's series for
//! `perfdb export` ([`export`]).

// The one module with unsafe code: DuckDB's C API, for the kind of a statement.
pub mod export;
#[allow(unsafe_code)]
pub mod sql;
pub mod table;
