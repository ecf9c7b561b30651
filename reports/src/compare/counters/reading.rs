//! What a kernel's moved counters say together (`the kernel moves more data, compute
//! unchanged`), told by the counters' names and units in any of the three profilers.

use super::{CounterMove, Diffs};

/// What a counter is about, told by its name and unit (ncu, rocprofv3 and proton
/// spell them differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum About {
    /// Bytes moved to and from device memory: how much, not how fast.
    Traffic,
    /// How busy the SMs were: compute throughput as a share of peak.
    Compute,
    /// Work done: instructions, flops.
    Work,
    Occupancy,
    Registers,
    /// The launch: grid and block.
    Launch,
    Other,
}

pub(super) fn about(name: &str, unit: &str) -> About {
    let n = name.to_ascii_lowercase();
    let has = |w: &str| n.contains(w);
    if has("block limit") {
        // What limits blocks per SM (`Block Limit Registers`): a bound, not a use.
        About::Other
    } else if has("occupancy") || has("warps_active") || has("active warps") {
        About::Occupancy
    } else if has("register") || has("vgpr") || has("sgpr") || has("spill") || has("scratch") {
        About::Registers
    } else if matches!(
        n.as_str(),
        "grid size" | "block size" | "grid_size" | "workgroup_size" | "threads"
    ) {
        About::Launch
    } else if unit == "byte" && (has("dram") || n == "bytes")
        || has("fetch_size")
        || has("write_size")
    {
        About::Traffic
    } else if has("compute (sm)") || has("sm__throughput") || has("sm throughput") {
        About::Compute
    } else if has("flop") || has("inst_executed") || has("valu") || n == "executed instructions" {
        About::Work
    } else {
        About::Other
    }
}

/// The moves read together: more or less data, compute throughput, work, occupancy,
/// registers, a grown launch; what was profiled and did not move said beside a move
/// (`compute unchanged`, `DRAM traffic unchanged`).
pub(super) fn reading(moved: &[CounterMove], all: &Diffs) -> Option<String> {
    let largest = |a: About| {
        moved
            .iter()
            .filter(|m| about(&m.name, &m.unit) == a)
            .filter_map(|m| m.change)
            .max_by(|x, y| x.abs().total_cmp(&y.abs()))
    };
    let profiled = |a: About| all.keys().any(|(n, _, u)| about(n, u) == a);
    let mut said = Vec::new();
    let traffic = traffic_change(all).filter(|c| c.abs() >= super::MOVED);
    match traffic {
        Some(c) if c > 0.0 => said.push(format!("the kernel moves more data ({:+.0}%)", c * 100.0)),
        Some(c) => said.push(format!("the kernel moves less data ({:+.0}%)", c * 100.0)),
        None => {}
    }
    if let Some(c) = largest(About::Compute) {
        said.push(format!(
            "its compute throughput {} ({:+.0}%)",
            if c < 0.0 { "fell" } else { "rose" },
            c * 100.0
        ));
    }
    if let Some(c) = largest(About::Work) {
        said.push(format!(
            "it executes {} instructions ({:+.0}%)",
            if c < 0.0 { "fewer" } else { "more" },
            c * 100.0
        ));
    }
    if let Some(c) = largest(About::Occupancy) {
        said.push(
            if c < 0.0 {
                "it lost occupancy"
            } else {
                "it gained occupancy"
            }
            .to_string(),
        );
    }
    if largest(About::Registers).is_some_and(|c| c > 0.0) {
        said.push("it uses more registers or scratch".to_string());
    }
    if let Some(c) = largest(About::Launch) {
        said.push(format!(
            "its launch {} ({:+.0}%)",
            if c > 0.0 { "grew" } else { "shrank" },
            c * 100.0
        ));
    }
    if said.is_empty() {
        return None;
    }
    if profiled(About::Traffic) && traffic.is_none() {
        said.push("DRAM traffic unchanged".to_string());
    }
    if profiled(About::Compute) && largest(About::Compute).is_none() {
        said.push("compute unchanged".to_string());
    }
    Some(said.join(", "))
}

/// How much more or less the kernel moves to and from device memory: all its traffic
/// counters (bytes read and written) summed on each side, so a write stream of a few
/// hundred kilobytes that grew does not outvote the reads that did not.
fn traffic_change(all: &Diffs) -> Option<f64> {
    let (mut b, mut h) = (0.0, 0.0);
    for ((name, _, unit), (vb, vh)) in all {
        if about(name, unit) == About::Traffic {
            b += vb;
            h += vh;
        }
    }
    (b > 0.0).then(|| h / b - 1.0)
}
