//! A comparison's rows as direction-normalised ratios with their intervals.

use super::{add_titles, esc, register_font};
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

/// Trials drawn per side at most; more are drawn as that many evenly spaced quantiles,
/// so a row of 1,000 trials a side stays a few hundred bytes.
pub const MAX_DOTS: usize = 40;

/// `sorted` itself, or `n` of its evenly spaced quantiles (first and last included).
fn thin(sorted: &[f64], n: usize) -> Vec<f64> {
    if sorted.len() <= n || n < 2 {
        return sorted.to_vec();
    }
    (0..n)
        .map(|i| sorted[i * (sorted.len() - 1) / (n - 1)])
        .collect()
}

/// One compared row's trials, base above head on a shared scale, as a small inline SVG:
/// each trial a dot (up to [`MAX_DOTS`]), each side's median a tick; hovering a side
/// gives its count, median and range.
pub fn trials_strip(row: &crate::compare::Row) -> String {
    const W: f64 = 180.0;
    const PAD: f64 = 6.0;
    let side = |s: &crate::compare::SideStats| -> Vec<f64> {
        s.values.iter().flatten().copied().collect()
    };
    let (b, h) = (side(&row.base), side(&row.head));
    if b.is_empty() && h.is_empty() {
        return String::new();
    }
    let lo = b.iter().chain(&h).copied().fold(f64::MAX, f64::min);
    let hi = b.iter().chain(&h).copied().fold(f64::MIN, f64::max);
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let x = |v: f64| PAD + (v - lo) / span * (W - 2.0 * PAD);
    let head_color = match row.verdict {
        Verdict::Regression if !row.control => "#b91c1c",
        Verdict::Improvement if !row.control => "#15803d",
        _ => "#1f77b4",
    };
    let mut out = format!(
        "<svg class=\"trials\" width=\"{W}\" height=\"30\" viewBox=\"0 0 {W} 30\" role=\"img\" \
         aria-label=\"base and head trials\"><line x1=\"{PAD}\" y1=\"15\" x2=\"{}\" y2=\"15\" stroke=\"#e5e7eb\"/>",
        W - PAD
    );
    for (name, values, y, color, median) in [
        ("base", &b, 8.0, "#6b7280", row.base.median),
        ("head", &h, 22.0, head_color, row.head.median),
    ] {
        if let Some(m) = median {
            out.push_str(&format!(
                "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2\"/>",
                y - 6.0,
                y + 6.0,
                x = x(m)
            ));
        }
        // One group per side with one title; past MAX_DOTS trials, their quantiles.
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let dots = thin(&sorted, MAX_DOTS);
        let shown = if dots.len() < sorted.len() {
            format!(", drawn as {} quantiles", dots.len())
        } else {
            String::new()
        };
        out.push_str(&format!(
            "<g fill=\"none\" stroke=\"{color}\"><title>{name}: {} trial(s){shown}; median {}, range {} to {} {}</title>",
            sorted.len(),
            median.map(crate::fmt::num).unwrap_or_else(|| "-".into()),
            sorted.first().map(|v| crate::fmt::num(*v)).unwrap_or_default(),
            sorted.last().map(|v| crate::fmt::num(*v)).unwrap_or_default(),
            esc(&row.unit)
        ));
        for v in dots {
            out.push_str(&format!("<circle cx=\"{:.1}\" cy=\"{y}\" r=\"3\"/>", x(v)));
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}
