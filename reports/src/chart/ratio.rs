//! A comparison's rows as direction-normalised ratios with their intervals.

use super::{add_titles, register_font};
use crate::compare::{Report, Verdict};
use plotters::prelude::*;

/// Compare view: each compared row's direction-normalised ratio (> 1 = slower) with its
/// 95% interval (ratio of geometric means, Welch on logs), and the threshold band.
pub fn ratio_svg(report: &Report) -> String {
    register_font();
    let rows: Vec<&crate::compare::Row> =
        report.rows.iter().filter(|r| r.change.is_some()).collect();
    let n = rows.len().max(1);
    let w = |r: &crate::compare::Row| 1.0 + r.change.expect("filtered");
    let interval = |r: &crate::compare::Row| -> Option<(f64, f64)> {
        let (a, b) = r.ratio_ci?;
        Some(match r.direction {
            perfdb_ingest::model::Direction::Higher => (1.0 / b, 1.0 / a),
            _ => (a, b),
        })
    };
    let lo = rows
        .iter()
        .map(|r| interval(r).map(|i| i.0).unwrap_or(w(r)))
        .fold(1.0 - report.options.threshold, f64::min);
    let hi = rows
        .iter()
        .map(|r| interval(r).map(|i| i.1).unwrap_or(w(r)))
        .fold(1.0 + report.options.threshold, f64::max);
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let height = (120 + 18 * n as u32).clamp(300, 2400);
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "head vs base: direction-normalised ratio (> 1 = slower)",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(360)
            .build_cartesian_2d((lo * 0.9)..(hi * 1.1), -0.5f64..(n as f64 - 0.5))
            .expect("chart coordinates");
        let _ = chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("ratio")
            .draw();
        let t = report.options.threshold;
        let _ = chart.draw_series(std::iter::once(Rectangle::new(
            [(1.0 / (1.0 + t), -0.5), (1.0 + t, n as f64 - 0.5)],
            RGBColor(200, 200, 200).mix(0.4).filled(),
        )));
        let _ = chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
            BLACK,
        )));
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let color = match r.verdict {
                Verdict::Regression if !r.control => RED,
                Verdict::Improvement if !r.control => GREEN,
                _ => RGBColor(90, 90, 90),
            };
            if let Some((a, b)) = interval(r) {
                let _ = chart.draw_series(std::iter::once(PathElement::new(
                    vec![(a, y), (b, y)],
                    color.stroke_width(2),
                )));
            }
            titles.push(format!(
                "{} {} {} {}: {} ({})",
                r.table,
                r.variant,
                r.key_display(),
                r.metric,
                r.verdict.as_str(),
                r.reason
            ));
            let _ = chart.draw_series(std::iter::once(Circle::new((w(r), y), 4, color.filled())));
            let (px, py) = chart.backend_coord(&(lo * 0.9, y));
            let label = format!(
                "{}{} {} {}",
                if r.control { "[control] " } else { "" },
                r.variant,
                r.key_display(),
                r.metric
            );
            let _ = root.draw(&Text::new(
                label,
                (px - 355, py - 6),
                ("sans-serif", 12).into_font(),
            ));
        }
        let _ = root.present();
    }
    add_titles(svg, &titles)
}
