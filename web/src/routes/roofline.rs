//! `/roofline`: a comparison's TFLOPS rows at their arithmetic intensity under their
//! device's roofs, base -> head as arrows (`perfdb_reports::chart::roofline`). Same
//! query as `/compare`.

use super::compare::{run, CompareQuery};
use crate::page::{esc, layout};
use crate::query::Query2;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use perfdb_reports::chart::roofline;
use perfdb_reports::compare::JudgeArgs;

pub async fn page(
    State(s): State<AppState>,
    uri: axum::http::Uri,
    Query2(q, judge): Query2<CompareQuery, JudgeArgs>,
) -> Result<Html<String>, AppError> {
    let query = uri.query().unwrap_or("").to_string();
    let devices = s.devices.clone();
    let report = blocking(s.clone(), move || {
        let r = run(&s, &q, &judge)?;
        let measured = perfdb_reports::db::roofs::measured(&s.db()?)
            .map_err(|e| AppError::internal(e.to_string()))?;
        Ok(r.map(|r| (r, measured)))
    })
    .await?;
    let Some((r, measured)) = report else {
        return Ok(Html(layout(
            "Roofline",
            "<p>Give a comparison: <code>/roofline?base=LABEL&amp;head=LABEL</code> (the same query as <a href=\"/compare\">Compare</a>).</p>",
        )));
    };
    let (points, left) = roofline::points(&r);
    let roofs = roofline::roofs(&r, &measured, &devices);
    let mut body = format!(
        "<p><a href=\"/compare?{}\">the comparison</a> · {} → {}</p>",
        esc(&query),
        esc(&r.base.selector),
        esc(&r.head.selector)
    );
    if roofs.is_empty() {
        body.push_str(
            "<p class=\"muted\" id=\"no-roofs\">No roof: no TFLOPS row names a device the table \
             knows (`perfdb devices`; `--machine` or a `device` tag names it).</p>",
        );
    }
    body.push_str(&format!(
        "<figure id=\"roofline\">{}</figure>",
        roofline::svg(&points, &roofs)
    ));
    body.push_str(&format!(
        "<p id=\"roofline-counts\">{} row(s) drawn, each at head with an arrow from base; {} \
         TFLOPS row(s) left off: their shape does not give their intensity (a GEMM keyed by \
         M, N, K and a data type does).</p>",
        points.len(),
        left
    ));
    if !roofs.is_empty() {
        body.push_str("<ul id=\"roofs\">");
        for roof in &roofs {
            body.push_str(&format!(
                "<li>{}: {} TB/s, {} TFLOPS</li>",
                esc(&roof.label),
                perfdb_reports::fmt::num(roof.tb_s),
                perfdb_reports::fmt::num(roof.tflops)
            ));
        }
        body.push_str("</ul>");
    }
    Ok(Html(layout("Roofline", &body)))
}
