//! The device table against the documents it cites: every figure has its printed form,
//! and the dense figure follows from it; AMD's figures also follow from AMD's formula.

use perfdb_ingest::devices::{Dtype, Quantity, Table};

/// The dense per-GPU figure a printed one stands for: TFLOPS or TB/s.
fn from_cited(cited: &str) -> f64 {
    let lower = cited.to_lowercase();
    let words: Vec<&str> = cited.split_whitespace().collect();
    // The figure is the number right before its unit.
    let (i, unit) = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| {
            let w = w.trim_end_matches(',').to_lowercase();
            let unit = ["teraflops", "tflops", "petaflops", "pflops", "tb/s", "gb/s"]
                .into_iter()
                .find(|u| w == *u || w.ends_with(u))?;
            Some((i, unit))
        })
        .unwrap_or_else(|| panic!("no unit in {cited:?}"));
    let w = words[i].trim_end_matches(',').to_lowercase();
    let glued = w.trim_end_matches(unit);
    let number = if glued.is_empty() {
        words[i - 1]
    } else {
        glued
    };
    let mut v: f64 = number
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("no number before the unit in {cited:?}"));
    if unit.starts_with('p') {
        v *= 1000.0;
    }
    if unit == "gb/s" {
        v /= 1000.0;
    }
    if lower.contains("with sparsity") {
        v /= 2.0;
    }
    if let Some(n) = lower
        .split(", ")
        .find_map(|p| p.strip_suffix(" gpus").and_then(|n| n.parse::<f64>().ok()))
    {
        v /= n;
    }
    v
}

#[test]
fn every_figure_follows_from_its_cited_form() {
    let t = Table::builtin();
    assert!(t.devices.len() >= 10);
    for d in &t.devices {
        assert!(d.source.contains("https://"), "{}: no source", d.id);
        let figures = d.figures();
        assert!(!figures.is_empty(), "{}: no figures", d.id);
        for (q, v) in &figures {
            let cited = d
                .cited
                .get(q.name())
                .unwrap_or_else(|| panic!("{} {}: no cited form", d.id, q.name()));
            let want = from_cited(cited);
            assert!(
                (v - want).abs() <= 0.05 * want.max(1.0) / 100.0 + 0.051,
                "{} {}: table {v}, document {cited:?} gives {want}",
                d.id,
                q.name()
            );
        }
        assert_eq!(
            d.cited.len(),
            figures.len(),
            "{}: a cited form with no figure",
            d.id
        );
    }
}

#[test]
fn amd_figures_follow_from_cus_clock_and_rate() {
    let t = Table::builtin();
    let mut checked = 0;
    for d in t.devices.iter().filter(|d| d.vendor == "AMD") {
        let f = d
            .formula
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no formula", d.id));
        for (dt, rate) in &f.flops_per_clock_cu {
            let q = Quantity::Compute(Dtype::from_name(dt).unwrap());
            let v = d
                .figure(q)
                .unwrap_or_else(|| panic!("{} {dt}: no figure", d.id));
            let formula = f.cus as f64 * f.clock_mhz as f64 * *rate as f64 / 1e6;
            assert!(
                (v - formula).abs() < 0.06,
                "{} {dt}: table {v}, {} CUs x {} MHz x {rate} = {formula:.2}",
                d.id,
                f.cus,
                f.clock_mhz
            );
            checked += 1;
        }
        let compute = d
            .figures()
            .into_iter()
            .filter(|(q, _)| *q != Quantity::Bandwidth)
            .count();
        assert_eq!(
            compute,
            f.flops_per_clock_cu.len(),
            "{}: a figure outside the formula",
            d.id
        );
    }
    assert!(checked >= 20);
}

#[test]
fn the_figures_runs_are_held_against() {
    let t = Table::builtin();
    let peak = |id: &str, q: Quantity| t.get(id).unwrap().figure(q).unwrap();
    // The H200 of this project's samples: about 989 dense bf16 TFLOPS and 4.8 TB/s.
    assert_eq!(peak("h200", Quantity::Compute(Dtype::Bf16)), 989.5);
    assert_eq!(peak("h200", Quantity::Bandwidth), 4.8);
    assert_eq!(peak("h100-sxm", Quantity::Bandwidth), 3.35);
    assert_eq!(peak("mi300x", Quantity::Compute(Dtype::Bf16)), 1307.4);
    assert_eq!(peak("mi300x", Quantity::Compute(Dtype::Fp8)), 2614.9);
    assert_eq!(peak("mi355x", Quantity::Compute(Dtype::Fp4)), 10066.3);
    assert_eq!(peak("b200", Quantity::Compute(Dtype::Bf16)), 2250.0);
    assert_eq!(peak("a100-sxm4-80gb", Quantity::Bandwidth), 2.039);
}

#[test]
fn the_cited_form_reader_reads_each_spelling() {
    assert_eq!(
        from_cited("BFLOAT16 Tensor Core 1,979 teraFLOPS with sparsity"),
        989.5
    );
    assert_eq!(from_cited("GPU Memory Bandwidth 4.8TB/s"), 4.8);
    assert_eq!(from_cited("GPU Memory Bandwidth 2,039GB/s"), 2.039);
    assert_eq!(
        from_cited("FP16/BF16 Tensor Core 36 PFLOPS with sparsity, 8 GPUs"),
        2250.0
    );
    assert_eq!(from_cited("Peak bfloat16 1307.4 TFLOPs"), 1307.4);
}

/// A name picks one part: no identity belongs to two devices, and none is an
/// architecture that two parts share (`gfx942`: MI300X and MI325X; `sm_90`: H100 and
/// H200), whose peaks differ.
#[test]
fn every_identity_names_one_part() {
    let t = Table::builtin();
    let mut seen = std::collections::HashMap::new();
    for d in &t.devices {
        for n in std::iter::once(&d.id).chain(&d.identities) {
            if let Some(other) = seen.insert(n.to_lowercase(), d.id.clone()) {
                assert_eq!(other, d.id, "{n} names {other} and {}", d.id);
            }
        }
    }
    for d in &t.devices {
        let sharing: Vec<&str> = t
            .devices
            .iter()
            .filter(|o| o.arch.eq_ignore_ascii_case(&d.arch))
            .map(|o| o.id.as_str())
            .collect();
        if sharing.len() > 1 {
            assert!(
                t.named(&d.arch).is_none(),
                "{} names a device though {} share it",
                d.arch,
                sharing.join(", ")
            );
        }
    }
    for arch in ["gfx942", "gfx950", "sm_90", "cuda:9.0"] {
        assert!(t.named(arch).is_none(), "{arch}");
    }
}
