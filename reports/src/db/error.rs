//! Why a read of the warehouse failed.

use perfdb_ingest::warehouse::WarehouseError;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Warehouse(#[from] WarehouseError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error("unexpected query result: {0}")]
    Unexpected(String),
}
