//! `perfdb serve`.

use crate::cli::ServeArgs;
use crate::Exit;
use anyhow::Context;
use std::path::Path;

pub fn run(root: &Path, a: ServeArgs) -> anyhow::Result<Exit> {
    let config = perfdb_reports::config::Config::load_or_default(a.config.as_deref())?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(a.addr)
            .await
            .with_context(|| format!("cannot listen on {}", a.addr))?;
        let addr = listener.local_addr()?;
        eprintln!(
            "perfdb serving {} ({}) on http://{addr}/",
            root.display(),
            if a.allow_triage {
                "read-only but for alert triage"
            } else {
                "read-only"
            }
        );
        let mut state = perfdb_web::AppState::new(root).with_config(config);
        if a.allow_triage {
            state = state.with_triage();
        }
        let app = perfdb_web::app(state);
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(Exit::Ok)
    })
}
