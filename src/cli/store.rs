//! The arguments of the commands over the warehouse: `compact`, `vacuum`, `runs`, `sql`,
//! `export`, `export-site`, `serve`.

use super::*;

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Seconds after which the files of a commit that never completed (an interrupted
    /// ingest) are taken out of the tables' logs
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub grace: u64,
    /// Rows a merged measurements file holds at most; a file of half as many or more is
    /// left as it is, so a compaction reads only what was ingested since the last
    /// (a compaction holds one such file in memory: about 1.2 GB at the default, measured)
    #[arg(long, value_name = "ROWS", default_value_t = perfdb_ingest::warehouse::compact::FILE_ROWS, value_parser = file_rows)]
    pub file_rows: u64,
}

#[derive(Debug, Args)]
pub struct VacuumArgs {
    /// Hours a file no table lists is kept before it is deleted: readers that still
    /// hold an older snapshot (a long query, another engine) may be reading it, and an
    /// ingest in flight has written files it has not committed yet. Under 1 h needs
    /// --force
    #[arg(long, value_name = "HOURS", default_value_t = 168.0)]
    pub retain: f64,
    /// Allow --retain under 1 h: only when no ingest, compact or reader runs meanwhile
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[arg(long)]
    pub label: Option<String>,
    /// Commit prefix
    #[arg(long)]
    pub commit: Option<String>,
    /// Only runs carrying this tag (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT metric, count(*) FROM measurements GROUP BY ALL"
    pub query: String,
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
    /// Allow statements that change files or settings (COPY ... TO, ATTACH, SET...),
    /// run under the warehouse's writer lock
    #[arg(long)]
    pub write: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// PyTorch benchmark database records, schema v3, as JSON lines
    #[value(name = "pytorch-v3")]
    PytorchV3,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The label whose runs are written
    pub label: String,
    #[arg(long, value_enum, default_value = "pytorch-v3")]
    pub format: ExportFormat,
    /// File to write [default: standard output]
    #[arg(long, short)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportSiteArgs {
    /// Folder to write (new, empty, or an earlier export, whose pages are replaced)
    pub dir: std::path::PathBuf,
    /// Config file for the comparisons shown, as for `serve` [default: ./perfdb.toml
    /// when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// Pages at most; links to pages beyond are left as text
    #[arg(long, default_value_t = 5000)]
    pub max_pages: usize,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: loopback by default; another address (0.0.0.0:8080) makes
    /// the warehouse readable by anyone who reaches it, and says so
    #[arg(long, alias = "addr", default_value = "127.0.0.1:8080")]
    pub bind: std::net::SocketAddr,
    /// Config file with comparison defaults and per table/variant/metric thresholds,
    /// as for `compare` [default: ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// Accept triage (acknowledge, dismiss, reopen) from the alerts page; the page is
    /// read-only otherwise
    #[arg(long)]
    pub allow_triage: bool,
    /// A host name the server answers to besides the bound address, localhost and
    /// loopback (repeatable): requests naming any other host get 421, so a web page
    /// cannot reach the warehouse through a DNS name rebound to this address
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
}

fn file_rows(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!("'{s}' is not a number of rows (1 or more)")),
    }
}
