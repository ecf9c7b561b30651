//! The arguments of the watchdog's commands: `perfdb detect`, `perfdb alerts`, `perfdb status`.

use super::*;

#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The label whose history to scan, e.g. main
    #[arg(long, default_value = "main")]
    pub label: String,
    /// What CI runs after each commit: read the history from `context` commits before
    /// this commit (prefix; [detect] in perfdb.toml, default 200), not the whole
    /// label, and hold the alerts of that window to it (a step confirmed only now,
    /// an old alert's fix); report the changes from this commit on and every alert
    /// this run raised, confirmed or resolved
    #[arg(long, value_name = "COMMIT")]
    pub since: Option<String>,
    /// POST each active alert not yet delivered there (repeatable): `http://` or
    /// `https://` (extra CA certificates from $PERFDB_CA_FILE), `user:password@` for
    /// Basic auth; `slack+https://...` sends Slack's incoming-webhook payload,
    /// `github+https://api.github.com/repos/O/R/issues/N/comments` a comment (token from
    /// $GITHUB_TOKEN). Also `notify = [...]` under [compare] in perfdb.toml. Checked
    /// before anything is stored
    #[arg(long, value_name = "URL")]
    pub notify: Vec<String>,
    /// Deadline of one delivery attempt, from connect to the answer's status line
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = positive_seconds)]
    pub notify_timeout: f64,
    /// Config file [default: ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds in (0, 3600]")),
    }
}

#[derive(Debug, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub action: Option<AlertsAction>,
    #[arg(long, value_enum, default_value = "table", global = true)]
    pub format: OutputFormat,
    /// Who acts (recorded with the status change) [default: $USER]
    #[arg(long, global = true)]
    pub who: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AlertsAction {
    /// Every alert, newest first (the default)
    List {
        /// Only alerts in this status
        #[arg(long, value_parser = alert_status())]
        status: Option<AlertStatus>,
        /// One row per change: alerts of one label and machine class whose commit
        /// ranges overlap, under their earliest alert's id, worst first
        #[arg(long)]
        grouped: bool,
    },
    /// One alert with its metrics, runs and status history, and how to confirm it: the
    /// commit range, the `perfdb ab` command that runs the two commits' builds
    /// interleaved, and `git bisect` hints for commits in the range nobody measured
    Show {
        id: String,
        /// A checkout of the project: the range then lists every commit between last
        /// good and first bad, measured or not
        #[arg(long, value_name = "DIR")]
        git_dir: Option<std::path::PathBuf>,
    },
    /// Acknowledge an active alert (someone is on it)
    Ack {
        id: String,
        #[arg(long, default_value = "")]
        note: String,
        /// Act on every alert of the group that holds ID (those the action applies to)
        #[arg(long)]
        group: bool,
    },
    /// Dismiss an alert, saying why (not a real regression, accepted trade-off)
    Dismiss {
        id: String,
        #[arg(long)]
        note: String,
        /// Act on every alert of the group that holds ID (those the action applies to)
        #[arg(long)]
        group: bool,
    },
    /// Make an acknowledged, dismissed or resolved alert active again
    Reopen {
        id: String,
        #[arg(long, default_value = "")]
        note: String,
        /// Act on every alert of the group that holds ID (those the action applies to)
        #[arg(long)]
        group: bool,
    },
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The label [default: the one with the most commits]
    #[arg(long)]
    pub label: Option<String>,
    /// The machine class (`perfdb status` lists them) [default: the label's with the
    /// most runs]
    #[arg(long)]
    pub machine: Option<String>,
    /// Newest commits spanned
    #[arg(long, default_value_t = perfdb_reports::overview::COMMITS)]
    pub commits: usize,
    #[arg(long)]
    pub table: Option<String>,
    #[arg(long)]
    pub variant: Option<String>,
    #[arg(long)]
    pub metric: Option<String>,
    /// Rows shown at most (0: all)
    #[arg(long, default_value_t = 40)]
    pub limit: usize,
    /// Config file whose `[detect]` thresholds find the change points [default:
    /// ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: TableFormat,
}
