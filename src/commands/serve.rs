//! `perfdb serve` and `perfdb export-site`.

use crate::cli::{ExportSiteArgs, ServeArgs};
use crate::Exit;
use anyhow::Context;
use std::path::Path;

pub fn run(root: &Path, a: ServeArgs) -> anyhow::Result<Exit> {
    let config = perfdb_reports::config::Config::load_or_default(a.config.as_deref())?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(a.bind)
            .await
            .with_context(|| format!("cannot listen on {}", a.bind))?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            say!(
                "warning: listening on {addr}, beyond this machine: anyone who reaches it can read \
                 the warehouse{}; it answers to the host names {} (add the names people use with --host)",
                if a.allow_triage { " and triage its alerts" } else { "" },
                std::iter::once(addr.ip().to_string()).chain(a.hosts.iter().cloned()).collect::<Vec<_>>().join(", ")
            );
        }
        say!(
            "perfdb serving {} ({}) on http://{addr}/",
            root.display(),
            if a.allow_triage {
                "read-only but for alert triage"
            } else {
                "read-only"
            }
        );
        let bound = match addr.ip() {
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let mut state = perfdb_web::AppState::new(root)
            .with_config(config)
            .with_hosts(std::iter::once(bound).chain(a.hosts.iter().cloned()));
        if a.allow_triage {
            state = state.with_triage();
        }
        let app = perfdb_web::app(state);
        let limits = perfdb_web::server::ServerLimits::default();
        perfdb_web::server::serve(listener, app, limits, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        Ok(Exit::Ok)
    })
}

pub fn export_site(root: &Path, a: ExportSiteArgs) -> anyhow::Result<Exit> {
    let config = perfdb_reports::config::Config::load_or_default(a.config.as_deref())?;
    let state = perfdb_web::AppState::new(root).with_config(config);
    let rt = tokio::runtime::Runtime::new()?;
    let r = rt
        .block_on(perfdb_web::static_site::export_site(
            &state,
            &a.dir,
            a.max_pages,
        ))
        .with_context(|| format!("cannot export the site of {}", root.display()))?;
    println!(
        "exported {} page(s), {:.1} MB, to {}; open {}",
        r.pages,
        r.bytes as f64 / 1e6,
        a.dir.display(),
        a.dir.join("index.html").display()
    );
    if r.unlinked > 0 {
        println!(
            "{} link(s) to pages beyond --max-pages {} left as text",
            r.unlinked, a.max_pages
        );
    }
    for (url, status) in &r.errors {
        say!("warning: {url}: the app answered {status}; exported as it reads");
    }
    Ok(Exit::Ok)
}
