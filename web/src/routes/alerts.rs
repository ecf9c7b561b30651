//! `/alerts`: regressions found by comparisons saved with `perfdb compare --save`.

use crate::page::{esc, layout};
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_reports::alerts::{list, Alert};

pub async fn api(State(s): State<AppState>) -> Result<Json<Vec<Alert>>, AppError> {
    blocking(move || Ok(list(&s.root)))
        .await
        .map(Json)
        .map_err(AppError::json)
}

pub async fn page(State(s): State<AppState>) -> Result<Html<String>, AppError> {
    let alerts = blocking(move || Ok(list(&s.root))).await?;
    if alerts.is_empty() {
        return Ok(Html(layout(
            "Alerts",
            "<p>No saved comparisons yet. Save one with <code>perfdb compare BASE HEAD --control torch --save</code>; \
             its regressions are listed here.</p>",
        )));
    }
    let mut body = String::from(
        "<table><tr><th>saved</th><th>base → head</th><th>verdict</th><th>regressions</th></tr>",
    );
    for a in &alerts {
        let regs: Vec<String> = a
            .regressions
            .iter()
            .map(|r| {
                let key = r["key_text"].as_str().unwrap_or("");
                format!(
                    "{} {} {} {}: {}",
                    r["table"].as_str().unwrap_or(""),
                    r["variant"].as_str().unwrap_or(""),
                    key,
                    r["metric"].as_str().unwrap_or(""),
                    r["change"]
                        .as_f64()
                        .map(|c| format!("{:+.1}%", c * 100.0))
                        .unwrap_or_else(|| "numerics failure".into())
                )
            })
            .collect();
        body.push_str(&format!(
            "<tr><td class=\"muted\">{}</td><td><a href=\"/compare?{replay}\">{b} → {h}</a></td><td class=\"{}\">{}: {}</td><td>{}</td></tr>",
            esc(&a.file), if a.verdict == "regression" { "regression" } else { "" }, esc(&a.verdict), esc(&a.reason),
            if regs.is_empty() { "—".into() } else { regs.iter().map(|r| esc(r)).collect::<Vec<_>>().join("<br>") },
            b = esc(&a.base), h = esc(&a.head), replay = esc(&a.replay)
        ));
    }
    body.push_str("</table>");
    Ok(Html(layout("Alerts", &body)))
}
