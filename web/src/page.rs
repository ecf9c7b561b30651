//! The page layout and HTML helpers. Templates are Rust strings: the binary is
//! self-contained.

pub fn esc(s: &str) -> String {
    perfdb_reports::chart::esc(s)
}

/// The one stylesheet, inline; the security policy allows it by its hash (`guard`).
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#222}\
nav{background:#1f2937;padding:.6em 1em}nav a{color:#e5e7eb;margin-right:1.2em;text-decoration:none;font-weight:600}\
main{padding:1em 1.5em}table{border-collapse:collapse;font-size:14px}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}th{background:#f3f4f6}\
td.num{text-align:right;font-variant-numeric:tabular-nums}.error{color:#b91c1c;font-weight:600}\
.regression{color:#b91c1c;font-weight:600}.improvement{color:#15803d}.muted{color:#6b7280}\
form{margin:.5em 0 1em}select,input{margin-right:.8em}.verdict{font-size:1.2em;font-weight:700}\
td.names{min-width:16em}td.source{max-width:18em}";

/// The page's one script (no inline script: see `guard`); a static export drops it
/// with the forms it serves.
pub const SCRIPT: &str = "<script src=\"/app.js\" defer></script>";

pub fn layout(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} · perfdb</title>\
         <style>{STYLE}</style>{SCRIPT}</head><body><nav><a href=\"/\">Overview</a><a href=\"/runs\">Runs</a><a href=\"/chart\">Chart</a>\
         <a href=\"/history\">History</a><a href=\"/compare\">Compare</a><a href=\"/alerts\">Alerts</a><a href=\"/devices\">Devices</a></nav>\
         <main><h1>{t}</h1>{body}</main></body></html>",
        t = esc(title)
    )
}

/// `<select name=..>` with `selected` marked.
pub fn select(name: &str, options: &[String], selected: &str) -> String {
    let opts: String = options
        .iter()
        .map(|o| {
            format!(
                "<option value=\"{v}\"{s}>{v}</option>",
                v = esc(o),
                s = if o == selected { " selected" } else { "" }
            )
        })
        .collect();
    format!("<label>{name} <select name=\"{name}\" data-submit>{opts}</select></label>")
}

/// Shown instead of an error when the warehouse has no runs yet.
pub fn empty_warehouse(root: &std::path::Path) -> String {
    format!(
        "<p>The warehouse <code>{}</code> has no runs yet.</p>\
         <p>Ingest benchmark logs, then reload:</p>\
         <pre>perfdb ingest logs/base/ --label base --commit &lt;sha&gt;\nperfdb ingest logs/head/ --label head</pre>\
         <p>or try the bundled sample data with <code>perfdb demo</code>.</p>",
        esc(&root.display().to_string())
    )
}
