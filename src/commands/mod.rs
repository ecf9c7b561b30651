//! One module per subcommand; each returns the process exit code.

mod ab;
mod affected;
mod alerts;
mod bisect;
mod compare;
mod demo;
mod detect;
mod devices;
mod export;
mod ingest;
mod noise;
mod query;
mod run;
mod serve;
mod status;
mod upkeep;

use crate::cli::{Cli, Command};
use crate::Exit;
use perfdb_ingest::devices::Table;
use perfdb_reports::config::Config;
use std::sync::Arc;

pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    let wh = cli.warehouse;
    perfdb_ingest::warehouse::location::check_location(&wh.to_string_lossy())
        .map_err(|e| anyhow::anyhow!("--warehouse {e}"))?;
    match cli.command {
        Command::Ingest(a) => ingest::run(&wh, a),
        Command::Runs(a) => query::runs(&wh, a),
        Command::Status(a) => status::run(&wh, a),
        Command::Sql(a) => query::sql(&wh, a),
        Command::Compare(a) => compare::run(&wh, a),
        Command::Detect(a) => detect::detect(&wh, a),
        Command::Alerts(a) => alerts::run(&wh, a),
        Command::Compact(a) => {
            upkeep::compact(&wh, std::time::Duration::from_secs(a.grace), a.file_rows)
        }
        Command::Vacuum(a) => upkeep::vacuum(&wh, a.retain, a.force),
        Command::Migrate => upkeep::migrate(&wh),
        Command::Serve(a) => serve::run(&wh, a),
        Command::ExportSite(a) => serve::export_site(&wh, a),
        Command::Export(a) => export::run(&wh, a),
        Command::Run(a) => run::run(&wh, a),
        Command::Ab(a) => ab::run(&wh, *a),
        Command::Bisect(a) => bisect::run(&wh, *a),
        Command::Noise(a) => noise::run(&wh, a),
        Command::Formats => ingest::formats(),
        Command::Devices(a) => devices::run(&wh, a),
        Command::Demo => demo::run(&wh),
    }
}

/// The comparison's options: the flags, then `cfg` (`perfdb.toml`, as
/// [`Config::load_or_default`] read it from the flags' `--config`), then the defaults —
/// the same resolution the web app uses (`Config::resolve`).
pub fn judge_options(
    cfg: &Config,
    a: &perfdb_reports::compare::JudgeArgs,
    baseline_window: Option<usize>,
) -> anyhow::Result<perfdb_reports::compare::Options> {
    // The error names the option as its flag (`--control-tol`), not as the config does.
    cfg.resolve(a, baseline_window)
        .map_err(|e| anyhow::anyhow!(e.worded(&format!("--{}", e.option().replace('_', "-")))))
}

/// The device table of `perfdb.toml` (`config`, else the working directory's, else the
/// built-in table alone): a command makes it once and passes it where runs are read.
pub fn device_table(config: Option<&std::path::Path>) -> anyhow::Result<Arc<Table>> {
    Ok(Config::load_or_default(config)?.device_table())
}

/// Parse `key=value` pairs given on the command line.
pub fn parse_pairs(items: &[String], what: &str) -> anyhow::Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => anyhow::bail!("invalid {what} '{t}': expected KEY=VALUE"),
        })
        .collect()
}

/// Colour only on a terminal, and never when NO_COLOR is set.
/// Write a report to standard output with text read from outside made visible
/// (`fmt::visible`: a commit subject cannot clear the screen), perfdb's own colours kept
/// when it colours. JSON passes unchanged: `perfdb_reports::json`, its one writer, writes
/// every control character as a `\uXXXX` escape.
pub fn print_out(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let text = perfdb_reports::fmt::visible(text, use_color());
    std::io::stdout().lock().write_all(text.as_bytes())
}

pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}
