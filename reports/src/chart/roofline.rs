//! The roofline of a comparison: each TFLOPS row at its arithmetic intensity (flop per
//! byte of device memory) under its device's roofs, log-log, base -> head as an arrow.
//!
//! A row's intensity comes from its shape when the shape says it: a GEMM keyed by `M`,
//! `N`, `K` (and a data type) does 2·M·N·K flop over A, B and C once each. A row whose
//! shape says nothing is left off and counted. The roofs are the datasheet's (`perfdb
//! devices`): the bandwidth slope and each data type's compute ceiling of the device the
//! rows ran on, and what `perfdb devices measure` stored for it (dashed).

use crate::compare::{Report, Row, Verdict};
use crate::db::roofs::Measured;
use perfdb_ingest::devices::{self, dtype::Dtype, Table};

/// One row on the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub label: String,
    /// flop per byte.
    pub intensity: f64,
    pub base: Option<f64>,
    pub head: Option<f64>,
    pub verdict: Verdict,
}

/// A roof: a compute ceiling (TFLOPS) under a bandwidth slope (TB/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub label: String,
    pub tflops: f64,
    pub tb_s: f64,
    /// Measured on the device (`perfdb devices measure`), not the datasheet's.
    pub measured: bool,
}

/// Bytes an element of `d` takes.
fn bytes_of(d: Dtype) -> f64 {
    match d {
        Dtype::Fp64 => 8.0,
        Dtype::Fp32 | Dtype::Tf32 => 4.0,
        Dtype::Bf16 | Dtype::Fp16 => 2.0,
        Dtype::Fp8 => 1.0,
        Dtype::Fp4 => 0.5,
    }
}

/// A GEMM's intensity from its key: `M`, `N`, `K` and a data type; None otherwise.
pub fn gemm_intensity(key: &[(String, String)]) -> Option<f64> {
    let dim = |name: &str| -> Option<f64> {
        key.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.trim().parse::<f64>().ok())
            .filter(|v| *v > 0.0)
    };
    let (m, n, k) = (dim("m")?, dim("n")?, dim("k")?);
    let e = bytes_of(devices::dtype::of_key(key)?);
    Some(2.0 * m * n * k / (e * (m * k + k * n + m * n)))
}

/// The rows a roofline shows (TFLOPS rows whose intensity the shape gives) and how many
/// TFLOPS rows it left off.
pub fn points(report: &Report) -> (Vec<Point>, usize) {
    let tflops: Vec<&Row> = report.rows.iter().filter(|r| r.unit == "TFLOPS").collect();
    let shown: Vec<Point> = tflops
        .iter()
        .filter_map(|r| {
            Some(Point {
                label: format!("{} {} {}", r.table, r.variant, r.key_display()),
                intensity: gemm_intensity(&r.key)?,
                base: r.base.median,
                head: r.head.median,
                verdict: if r.control {
                    Verdict::NoSignificantChange
                } else {
                    r.verdict
                },
            })
        })
        .collect();
    let left = tflops.len() - shown.len();
    (shown, left)
}

/// The roofs of the devices the rows were held against, one a data type: the
/// datasheet's, and the measured one where `measured` has it.
pub fn roofs(report: &Report, measured: &[Measured], table: &Table) -> Vec<Roof> {
    let mut out: Vec<Roof> = Vec::new();
    for r in report.rows.iter().filter(|r| r.unit == "TFLOPS") {
        let Some(p) = &r.peak else { continue };
        let Some(d) = table.get(&p.device) else {
            continue;
        };
        let Some(bw) = d.bandwidth else { continue };
        let label = format!("{} {} (datasheet)", d.name, p.quantity);
        if !out.iter().any(|o| o.label == label) {
            out.push(Roof {
                label,
                tflops: p.value,
                tb_s: bw,
                measured: false,
            });
        }
        // What the device really reached, when `devices measure` ran on it.
        let of = |q: &str| {
            measured
                .iter()
                .find(|m| m.device == d.id && m.quantity == q)
        };
        if let Some(c) = of(&p.quantity) {
            let label = format!("{} {} (measured)", d.name, p.quantity);
            if !out.iter().any(|o| o.label == label) {
                out.push(Roof {
                    label,
                    tflops: c.value,
                    tb_s: of("bandwidth").map_or(bw, |b| b.value),
                    measured: true,
                });
            }
        }
    }
    out
}

/// The plot's frame: its size, margins and log ranges, and where a value falls in it.
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
    /// Decades of intensity (flop/byte) and of TFLOPS the axes span.
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    /// A frame whose decades hold every value of `xs` and `ys` (and 1 of each).
    fn holding(xs: &[f64], ys: &[f64]) -> Frame {
        let down = |v: f64| 10f64.powf(v.log10().floor());
        let up = |v: f64| 10f64.powf(v.log10().ceil());
        let lo = |v: &[f64]| down(v.iter().copied().fold(f64::INFINITY, f64::min).min(1.0));
        let hi = |v: &[f64], room: f64| up(v.iter().copied().fold(1.0, f64::max) * room);
        Frame {
            w: 960.0,
            h: 560.0,
            left: 70.0,
            top: 20.0,
            right: 40.0,
            bottom: 50.0,
            x: (lo(xs), hi(xs, 4.0)),
            y: (lo(ys), hi(ys, 1.5)),
        }
    }

    fn px(&self, x: f64) -> f64 {
        let (a, b) = (self.x.0.log10(), self.x.1.log10());
        self.left + (x.log10() - a) / (b - a) * (self.w - self.left - self.right)
    }

    fn py(&self, y: f64) -> f64 {
        let (a, b) = (self.y.0.log10(), self.y.1.log10());
        self.top + (b - y.log10()) / (b - a) * (self.h - self.top - self.bottom)
    }

    /// The decade grid, its labels (0.1, 1, 10, 1000) and the axes' names.
    fn axes(&self) -> String {
        let tick = |v: f64| {
            if v >= 1.0 {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        };
        let (w, h, left, top, right, bottom) =
            (self.w, self.h, self.left, self.top, self.right, self.bottom);
        let mut s = String::new();
        let mut x = self.x.0;
        while x <= self.x.1 * 1.0001 {
            s += &format!(
                "<line x1=\"{0:.1}\" y1=\"{top}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#ddd\"/><text x=\"{0:.1}\" y=\"{2:.1}\" font-size=\"12\" text-anchor=\"middle\">{3}</text>",
                self.px(x), h - bottom, h - bottom + 16.0, tick(x)
            );
            x *= 10.0;
        }
        let mut y = self.y.0;
        while y <= self.y.1 * 1.0001 {
            s += &format!(
                "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"#ddd\"/><text x=\"{2:.1}\" y=\"{3:.1}\" font-size=\"12\" text-anchor=\"end\">{4}</text>",
                self.py(y), w - right, left - 6.0, self.py(y) + 4.0, tick(y)
            );
            y *= 10.0;
        }
        let mid = (top + h - bottom) / 2.0;
        s + &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">arithmetic intensity (flop/byte)</text>\
             <text x=\"14\" y=\"{mid:.1}\" font-size=\"13\" transform=\"rotate(-90 14 {mid:.1})\" text-anchor=\"middle\">TFLOPS</text>",
            (left + w - right) / 2.0,
            h - 10.0
        )
    }
}

/// Log-log SVG: x intensity (flop/byte), y TFLOPS; each roof a slope then a ceiling
/// (`class="roof"`, dashed when measured), each row a point at head (`class="point"`,
/// red when it regressed) and an arrow from base (`class="arrow"`); a `<title>` on each
/// for the reader.
pub fn svg(points: &[Point], roofs: &[Roof]) -> String {
    let xs: Vec<f64> = points
        .iter()
        .map(|p| p.intensity)
        .chain(roofs.iter().map(|r| r.tflops / r.tb_s))
        .collect();
    let ys: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.base, p.head])
        .flatten()
        .chain(roofs.iter().map(|r| r.tflops))
        .filter(|v| *v > 0.0)
        .collect();
    let f = Frame::holding(&xs, &ys);
    let (px, py) = (|x: f64| f.px(x), |y: f64| f.py(y));
    let num = crate::fmt::num;
    let esc = super::esc;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">\
         <rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>",
        f.w, f.h
    );
    s += &f.axes();
    for r in roofs {
        let ridge = r.tflops / r.tb_s;
        let start = f.x.0.max(f.y.0 / r.tb_s);
        s += &format!(
            "<polyline class=\"roof{}\" fill=\"none\" stroke=\"#444\" stroke-width=\"2\"{} points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"><title>{}: {} TB/s, {} TFLOPS (ridge at {} flop/byte)</title></polyline>",
            if r.measured { " measured" } else { "" },
            if r.measured { " stroke-dasharray=\"6 4\"" } else { "" },
            px(start), py(start * r.tb_s), px(ridge), py(r.tflops), px(f.x.1), py(r.tflops),
            esc(&r.label), num(r.tb_s), num(r.tflops), num(ridge)
        );
    }
    for p in points {
        let color = match p.verdict {
            Verdict::Regression => "#c00",
            Verdict::Improvement => "#080",
            _ => "#246",
        };
        if let (Some(b), Some(hd)) = (p.base, p.head) {
            s += &format!(
                "<line class=\"arrow\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"1.5\" opacity=\"0.7\"><title>{}: base {} -> head {} TFLOPS</title></line>",
                px(p.intensity), py(b), px(p.intensity), py(hd), esc(&p.label), num(b), num(hd)
            );
        }
        if let Some(hd) = p.head {
            s += &format!(
                "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{color}\"><title>{} at {} flop/byte: {} TFLOPS ({})</title></circle>",
                px(p.intensity), py(hd), esc(&p.label), num(p.intensity), num(hd), p.verdict.as_str()
            );
        }
    }
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_gemm_shape_gives_its_intensity() {
        // 8192^3 bf16: 2·8192^3 flop over 3·8192^2 elements of 2 bytes = 8192/3.
        let i = gemm_intensity(&key(&[
            ("M", "8192"),
            ("N", "8192"),
            ("K", "8192"),
            ("dtype", "bf16"),
        ]));
        assert!((i.unwrap() - 8192.0 / 3.0).abs() < 1e-9);
        let i = gemm_intensity(&key(&[
            ("m", "512"),
            ("n", "4096"),
            ("k", "4096"),
            ("dtype", "torch.float32"),
        ]));
        let want = 2.0 * 512.0 * 4096.0 * 4096.0 / (4.0 * (512.0 * 4096.0 * 2.0 + 4096.0 * 4096.0));
        assert!((i.unwrap() - want).abs() < 1e-9);
        assert_eq!(
            gemm_intensity(&key(&[("M", "8192"), ("N", "8192"), ("K", "8192")])),
            None,
            "no type"
        );
        assert_eq!(
            gemm_intensity(&key(&[("size", "4096"), ("dtype", "bf16")])),
            None
        );
    }

    #[test]
    fn the_svg_draws_each_roof_point_and_arrow() {
        let points = [Point {
            label: "gemm triton M=512".into(),
            intensity: 300.0,
            base: Some(520.0),
            head: Some(180.0),
            verdict: Verdict::Regression,
        }];
        let roofs = [Roof {
            label: "H200 bf16 (datasheet)".into(),
            tflops: 989.5,
            tb_s: 4.8,
            measured: false,
        }];
        let s = svg(&points, &roofs);
        assert_eq!(s.matches("class=\"roof\"").count(), 1);
        assert_eq!(s.matches("class=\"point\"").count(), 1);
        assert_eq!(s.matches("class=\"arrow\"").count(), 1);
        assert!(s.contains("ridge at 206.1 flop/byte"), "{s}");
    }
}
