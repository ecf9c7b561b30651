//! `/devices` and `/api/devices`: the device table every percent of peak is read
//! against (`perfdb devices`), with the document each figure comes from.

use crate::page::{esc, layout};
use crate::AppState;
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_ingest::devices::{Device, Quantity};

pub async fn api(State(s): State<AppState>) -> Json<Vec<Device>> {
    Json(s.devices.devices.clone())
}

pub async fn page(State(s): State<AppState>) -> Html<String> {
    let t = s.devices;
    let qs = Quantity::ALL;
    let head: String = qs
        .iter()
        .map(|q| match q {
            Quantity::Bandwidth => "<th class=\"num\">TB/s</th>".to_string(),
            q => format!("<th class=\"num\">{}</th>", esc(q.name())),
        })
        .collect();
    let rows: String = t
        .devices
        .iter()
        .map(|d| {
            let cells: String = qs
                .iter()
                .map(|q| {
                    let v = d.figure(*q).map_or("–".to_string(), |v| format!("{v}"));
                    let cited = d.cited.get(q.name()).map(|c| esc(c)).unwrap_or_default();
                    format!("<td class=\"num\" title=\"{cited}\">{v}</td>")
                })
                .collect();
            let from = if t.user.contains(&d.id) {
                " (perfdb.toml)"
            } else {
                ""
            };
            format!(
                "<tr id=\"device-{id}\"><td><b>{id}</b></td><td>{name}</td><td>{arch}</td>{cells}\
                 <td class=\"muted source\">{source}{from}</td><td class=\"muted names\">{ids}</td></tr>",
                id = esc(&d.id),
                name = esc(&d.name),
                arch = esc(&d.arch),
                source = source_html(&d.source),
                ids = esc(&d.identities.join(", ")),
            )
        })
        .collect();
    let body = format!(
        "<p>Dense peak TFLOPS per data type and memory bandwidth in TB/s \
         (hover a figure for the document's own words). Every TFLOPS and TB/s value of a run \
         on one of these devices is shown as a percent of its peak; a value more than {:.0}% \
         above it is impossible on the device: a warning at ingest, <i>invalid</i> in compare, \
         never an alert. A run's device is <code>ingest --device</code>, else its machine tag, else \
         the GPU its output prints, else its arch, when it is one of the names in the last \
         column. <code>[[device]]</code> entries \
         in perfdb.toml add devices or replace one.</p>\
         <table id=\"devices\"><thead><tr><th>id</th><th>name</th><th>arch</th>{head}\
         <th>source</th><th>matched by</th></tr></thead><tbody>{rows}</tbody></table>",
        100.0 * perfdb_ingest::devices::MARGIN
    );
    Html(layout("Devices", &body))
}

/// A figure's source as the table shows it: the document's name, its address on hover
/// when the source ends with one in parentheses (`NVIDIA H200 datasheet (https://...)`);
/// no link off the site (an exported site opens from disk with every link its own).
fn source_html(source: &str) -> String {
    match source
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once(" ("))
        .filter(|(_, url)| url.starts_with("https://"))
    {
        Some((name, url)) => format!("<span title=\"{}\">{}</span>", esc(url), esc(name)),
        None => esc(source),
    }
}
