//! `perfdb export-site DIR`: the web app's pages as a static site (HTML with inline SVG),
//! for GitHub Pages or any file server.
//!
//! The exporter asks the app itself for its pages, in process, so a static page is the
//! page the server would send: the runs (every page of them), a chart per table and
//! metric (and per label the runs page links), the history of every compared series,
//! every saved comparison (from its stored result), the alerts; then whatever those
//! pages link to, up to `max_pages`. Links between exported pages become relative file
//! links; a link to a page not exported is left as text; forms are dropped (a static
//! page cannot run a query). Files go to `DIR` as `index.html` and `<route>-<hash>.html`.

use crate::{app, AppState};
use axum::body::{to_bytes, Body};
use axum::http::{Request, StatusCode};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use tower::ServiceExt;

/// Marks a folder as perfdb's export, so a later export may replace its pages.
pub const MARKER: &str = ".perfdb-site";

/// Routes that are pages (not `/api`, not the bare SVG).
const PAGES: [&str; 7] = [
    "/", "/runs", "/chart", "/history", "/compare", "/alerts", "/devices",
];

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}: not empty and not a perfdb export; give an empty or new folder")]
    NotEmpty(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{url}: {reason}")]
    Page { url: String, reason: String },
}

/// What an export wrote.
#[derive(Debug, Default)]
pub struct Exported {
    pub pages: usize,
    pub bytes: u64,
    /// Pages the app answered with an error (written as they read; listed by URL).
    pub errors: Vec<(String, u16)>,
    /// Links left as text because their page was beyond `max_pages`.
    pub unlinked: usize,
}

/// `/chart?b=2&a=1` and `/chart?a=1&b=2` are one page.
fn normalise(url: &str) -> String {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut pairs: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    pairs.sort_unstable();
    if pairs.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", pairs.join("&"))
    }
}

fn is_page(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    PAGES.contains(&path)
}

fn file_name(url: &str) -> String {
    match url {
        "/" => "index.html".into(),
        _ => {
            let (path, query) = url.split_once('?').unwrap_or((url, ""));
            let route = path.trim_start_matches('/');
            if query.is_empty() {
                format!("{route}.html")
            } else {
                let h = perfdb_ingest::hash::fnv64(query);
                format!("{route}-{h:016x}.html")
            }
        }
    }
}

fn unescape(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// Every `href="..."` target in `html`, with where its value starts and ends.
fn hrefs(html: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = html[from..].find("href=\"") {
        let start = from + p + "href=\"".len();
        let Some(len) = html[start..].find('"') else {
            break;
        };
        out.push((start, start + len, unescape(&html[start..start + len])));
        from = start + len;
    }
    out
}

/// Drop `<form ...>...</form>`: a static page cannot run the query a form asks for.
fn drop_forms(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(p) = rest.find("<form") {
        out.push_str(&rest[..p]);
        match rest[p..].find("</form>") {
            Some(e) => rest = &rest[p + e + "</form>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The pages to start from: every page a reader would look for, whether or not another
/// page links to it.
fn seeds(state: &AppState) -> Result<Vec<String>, ExportError> {
    use crate::url::url_encode;
    let fail = |e: String| ExportError::Page {
        url: "(warehouse)".into(),
        reason: e,
    };
    let mut out: Vec<String> = PAGES.iter().map(|p| p.to_string()).collect();
    let db = state.db().map_err(|e| fail(e.message))?;
    let series = db.series().map_err(|e| fail(e.to_string()))?;
    let cat = perfdb_reports::chart::catalog(&db).map_err(|e| fail(e.to_string()))?;
    for (table, metrics) in &cat {
        for m in metrics {
            out.push(format!(
                "/chart?table={}&metric={}",
                url_encode(table),
                url_encode(m)
            ));
        }
    }
    for s in series.iter().filter(|s| s.compared) {
        out.push(format!(
            "/history?table={}&metric={}&variant={}&key={}",
            url_encode(&s.table),
            url_encode(&s.metric),
            url_encode(&s.variant),
            url_encode(&s.key)
        ));
    }
    for a in perfdb_reports::saved::list(&state.root) {
        out.push(format!("/compare?saved={}", url_encode(&a.file)));
    }
    Ok(out)
}

async fn fetch(state: &AppState, url: &str) -> Result<(StatusCode, String), ExportError> {
    let res = app(state.clone())
        .oneshot(
            Request::builder()
                .uri(url)
                .body(Body::empty())
                .expect("a request"),
        )
        .await
        .map_err(|e| ExportError::Page {
            url: url.into(),
            reason: e.to_string(),
        })?;
    let status = res.status();
    let body = to_bytes(res.into_body(), usize::MAX)
        .await
        .map_err(|e| ExportError::Page {
            url: url.into(),
            reason: e.to_string(),
        })?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// Export the site of `state`'s warehouse into `dir`: at most `max_pages` pages.
pub async fn export_site(
    state: &AppState,
    dir: &Path,
    max_pages: usize,
) -> Result<Exported, ExportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ExportError::Io { path, source }
    };
    prepare_dir(dir)?;
    let mut queue: VecDeque<String> = seeds(state)?.iter().map(|u| normalise(u)).collect();
    let mut seen: HashSet<String> = queue.iter().cloned().collect();
    // Pass 1: fetch and write each page as the app sent it, keeping only its name for
    // the contents (a site is hundreds of MB at team scale; one page is in memory at once).
    let mut pages: BTreeMap<String, String> = BTreeMap::new();
    let mut report = Exported::default();
    while let Some(url) = queue.pop_front() {
        if pages.len() >= max_pages {
            break;
        }
        let (status, html) = fetch(state, &url).await?;
        if status != StatusCode::OK {
            report.errors.push((url.clone(), status.as_u16()));
        }
        for (_, _, target) in hrefs(&html) {
            if target.starts_with('/') && is_page(&target) {
                let t = normalise(&target);
                if seen.insert(t.clone()) {
                    queue.push_back(t);
                }
            }
        }
        let path = dir.join(file_name(&url));
        std::fs::write(&path, &html).map_err(io(&path))?;
        pages.insert(url.clone(), describe(&url, &html));
    }
    // Pass 2: now that the pages exported are known, make their links relative.
    let stamp = format!(
        "<p class=\"muted\" id=\"exported\">A static copy of the perfdb web app over <code>{}</code>; \
         choices that need a query are in <code>perfdb serve</code>.</p>",
        crate::esc(&state.root.display().to_string())
    );
    for url in pages.keys() {
        let path = dir.join(file_name(url));
        let html = drop_forms(&std::fs::read_to_string(&path).map_err(io(&path))?);
        let mut out = String::with_capacity(html.len());
        let mut last = 0;
        for (start, end, target) in hrefs(&html) {
            out.push_str(&html[last..start]);
            let local = target.starts_with('/').then(|| normalise(&target));
            match local {
                Some(t) if pages.contains_key(&t) => out.push_str(&file_name(&t)),
                Some(_) => {
                    // Beyond the export: the link goes, its text stays.
                    report.unlinked += 1;
                    out.truncate(out.len() - "href=\"".len());
                    last = end + 1;
                    continue;
                }
                None => out.push_str(&html[start..end]),
            }
            last = end;
        }
        out.push_str(&html[last..]);
        let out = out
            .replacen(crate::page::SCRIPT, "", 1)
            .replacen("<main>", &format!("<main>{stamp}"), 1)
            .replacen("</nav>", CONTENTS_LINK, 1);
        std::fs::write(&path, &out).map_err(io(&path))?;
        report.pages += 1;
        report.bytes += out.len() as u64;
    }
    // The pages a server's forms would reach, listed: without it a static chart or
    // history no other page links to could not be found.
    let contents = contents(&pages).replacen("<main>", &format!("<main>{stamp}"), 1);
    let path = dir.join(CONTENTS);
    std::fs::write(&path, &contents).map_err(io(&path))?;
    report.pages += 1;
    report.bytes += contents.len() as u64;
    Ok(report)
}

const CONTENTS: &str = "contents.html";
const CONTENTS_LINK: &str = "<a href=\"contents.html\">Contents</a></nav>";

/// A page's `<title>` without the site's suffix.
fn title_of(html: &str) -> String {
    let t = html
        .split_once("<title>")
        .and_then(|(_, r)| r.split_once("</title>"))
        .map(|(t, _)| t)
        .unwrap_or("");
    unescape(t.trim_end_matches(" · perfdb"))
}

/// How the contents page names a page: its title, and the query choices the title does
/// not show (a chart's runs, a history's metric and label, a page number).
fn describe(url: &str, html: &str) -> String {
    let title = title_of(html);
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let shown = |name: &str| {
        matches!(
            name,
            "runs" | "machine" | "metric" | "label" | "status" | "offset" | "saved" | "control"
        ) && !(name == "metric" && url.starts_with("/chart"))
    };
    let extras: Vec<String> = query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .filter(|(k, v)| shown(k) && !v.is_empty())
        .map(|(k, v)| format!("{k} {}", crate::url::url_decode(v)))
        .collect();
    if extras.is_empty() {
        title
    } else {
        format!("{title} ({})", extras.join(", "))
    }
}

/// Every exported page by kind (`pages`: URL -> how the contents names it).
fn contents(pages: &BTreeMap<String, String>) -> String {
    let kinds = [
        ("/chart", "Charts"),
        ("/history", "Histories"),
        ("/compare", "Comparisons"),
        ("/alerts", "Alerts"),
        ("/", "Runs"),
    ];
    let mut body = String::new();
    for (route, heading) in kinds {
        let mut items: Vec<(String, String)> = pages
            .iter()
            .filter(|(u, _)| u.split('?').next() == Some(route))
            // The bare chart and history pages (the nav's) repeat one listed with its query.
            .filter(|(u, _)| !matches!(u.as_str(), "/chart" | "/history"))
            .map(|(u, name)| (name.clone(), file_name(u)))
            .collect();
        items.sort();
        if items.is_empty() {
            continue;
        }
        body.push_str(&format!("<h2>{heading} ({})</h2><ul>", items.len()));
        for (title, file) in items {
            body.push_str(&format!(
                "<li><a href=\"{file}\">{}</a></li>",
                crate::esc(&title)
            ));
        }
        body.push_str("</ul>");
    }
    let page = crate::page::layout("Contents", &body);
    // The layout's own links, as on every exported page.
    let mut out = String::with_capacity(page.len());
    let mut last = 0;
    for (start, end, target) in hrefs(&page) {
        out.push_str(&page[last..start]);
        match target.starts_with('/') {
            true => out.push_str(&file_name(&normalise(&target))),
            false => out.push_str(&page[start..end]),
        }
        last = end;
    }
    out.push_str(&page[last..]);
    out.replacen(crate::page::SCRIPT, "", 1)
        .replacen("</nav>", CONTENTS_LINK, 1)
}

/// An empty or new folder, or one an earlier export wrote (its pages are replaced).
fn prepare_dir(dir: &Path) -> Result<(), ExportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ExportError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .map(|e| e.path())
        .collect();
    if !entries.is_empty() && !dir.join(MARKER).exists() {
        return Err(ExportError::NotEmpty(dir.to_path_buf()));
    }
    for p in entries {
        if p.extension().is_some_and(|x| x == "html") {
            std::fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    let marker = dir.join(MARKER);
    std::fs::write(&marker, "perfdb export-site\n").map_err(io(&marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_names() {
        assert_eq!(normalise("/chart?b=2&a=1"), "/chart?a=1&b=2");
        assert_eq!(file_name("/"), "index.html");
        assert_eq!(file_name("/alerts"), "alerts.html");
        assert!(file_name("/chart?a=1").starts_with("chart-"));
        assert!(is_page("/history?x=1") && !is_page("/api/runs") && !is_page("/chart.svg"));
        let h = hrefs("<a href=\"/chart?a=1&amp;b=2\">x</a><a href=\"https://e.org\">y</a>");
        assert_eq!(h[0].2, "/chart?a=1&b=2");
        assert_eq!(h[1].2, "https://e.org");
        assert_eq!(drop_forms("a<form x>b</form>c<form>d</form>e"), "ace");
    }

    #[test]
    fn contents_names_what_the_title_does_not() {
        use crate::url::{url_decode, url_encode};
        let key = "{\"M\":\"512\",\"dtype\":\"µ bf16\"}";
        assert_eq!(url_decode(&url_encode(key)), key);
        assert_eq!(url_decode("a+b%2"), "a b%2");
        let html = "<title>gemm · latency · perfdb</title>";
        assert_eq!(
            describe("/chart?metric=latency&runs=base&table=gemm", html),
            "gemm · latency (runs base)"
        );
        assert_eq!(
            describe(
                "/history?key=x&label=main&metric=latency",
                "<title>History · gemm · perfdb</title>"
            ),
            "History · gemm (label main, metric latency)"
        );
    }
}
