//! `--gpus`: the GPUs an experiment's blocks run on at once, each trial pinned to its
//! GPU, and the check after each round that no GPU's state departs from the others'
//! (docs/STATS.md, "GPUs as blocks").

use super::gpu::GpuTool;
use super::nvml;
use perfdb_ingest::gpu_state::GpuState;

/// A GPU that runs blocks: its index (NVML's, or the query tool's) and what the trials'
/// `CUDA_VISIBLE_DEVICES` names it by (its UUID where NVML gives one: CUDA numbers GPUs
/// fastest first unless told otherwise, NVML by PCI bus).
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    pub index: u32,
    pub visible: String,
}

impl Lane {
    /// What pins a trial's process to this GPU (CUDA and ROCm both).
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("CUDA_VISIBLE_DEVICES".into(), self.visible.clone()),
            ("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()),
            ("HIP_VISIBLE_DEVICES".into(), self.index.to_string()),
        ]
    }
}

/// `--gpus`: `all`, or indices and ranges (`0-3,6`).
#[derive(Debug, Clone, PartialEq)]
pub enum GpuList {
    All,
    Listed(Vec<u32>),
}

impl std::str::FromStr for GpuList {
    type Err = String;
    fn from_str(s: &str) -> Result<GpuList, String> {
        if s.trim() == "all" {
            return Ok(GpuList::All);
        }
        let mut out: Vec<u32> = Vec::new();
        for part in s.split(',').map(str::trim) {
            let num = |t: &str| {
                t.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("'{t}' is not a GPU index (a list is like 0-3,6, or all)"))
            };
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(part)?, num(part)?),
            };
            if lo > hi {
                return Err(format!("'{part}': a range goes up (0-7)"));
            }
            for g in lo..=hi {
                if out.contains(&g) {
                    return Err(format!("GPU {g} is listed twice"));
                }
                out.push(g);
            }
        }
        Ok(GpuList::Listed(out))
    }
}

/// The lanes `--gpus` names, checked against what NVML sees; without NVML the indices as
/// given (`all` then needs NVML to count).
pub fn resolve(list: &GpuList, gpu: Option<GpuTool>) -> anyhow::Result<Vec<Lane>> {
    let nvml = gpu == Some(GpuTool::Nvml);
    let count = if nvml {
        Some(nvml::count().map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let indices = match (list, count) {
        (GpuList::All, Some(n)) => (0..n).collect(),
        (GpuList::All, None) => {
            anyhow::bail!("--gpus all: NVML did not load to count the GPUs; list them (--gpus 0-7)")
        }
        (GpuList::Listed(v), _) => v.clone(),
    };
    if let (Some(n), Some(bad)) = (count, indices.iter().find(|&&g| Some(g) >= count)) {
        anyhow::bail!(
            "--gpus: GPU {bad} is not there (NVML sees {n}: 0-{})",
            n - 1
        );
    }
    indices
        .into_iter()
        .map(|index| {
            let visible = match nvml {
                true => nvml::uuid(index).map_err(anyhow::Error::msg)?,
                false => index.to_string(),
            };
            Ok(Lane { index, visible })
        })
        .collect()
}

/// A lane's clock falls this far below the other lanes' median: its state departs.
pub const CLOCK_DEPARTS: f64 = 0.05;
/// Its temperature this many degrees above theirs.
pub const TEMPERATURE_DEPARTS: f64 = 15.0;

/// The GPU's state after each of a lane's measured trials.
pub type Readings = Vec<GpuState>;

/// Why each lane's state departs from the others' (index into `lanes`, why): its median
/// clock more than [`CLOCK_DEPARTS`] below the median of the others' medians, its median
/// temperature [`TEMPERATURE_DEPARTS`] above theirs, or a reason that lowers the clock
/// after most of its trials where most of the others' show none. Lanes without readings
/// are not judged; with one lane, none departs.
pub fn departed(lanes: &[&Readings]) -> Vec<(usize, String)> {
    let median = |mut v: Vec<f64>| -> Option<f64> {
        v.retain(|x| x.is_finite());
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| {
            let m = v.len() / 2;
            if v.len().is_multiple_of(2) {
                (v[m - 1] + v[m]) / 2.0
            } else {
                v[m]
            }
        })
    };
    let clock = |r: &Readings| median(r.iter().filter_map(|g| g.clock_mhz).collect());
    let temp = |r: &Readings| median(r.iter().filter_map(|g| g.temperature_c).collect());
    let throttled =
        |r: &Readings| !r.is_empty() && 2 * r.iter().filter(|g| g.throttled()).count() > r.len();
    let mut out = Vec::new();
    for (i, r) in lanes.iter().enumerate() {
        let others: Vec<&&Readings> = lanes
            .iter()
            .enumerate()
            .filter(|(j, o)| *j != i && !o.is_empty())
            .map(|(_, o)| o)
            .collect();
        if r.is_empty() || others.is_empty() {
            continue;
        }
        let theirs = |f: &dyn Fn(&Readings) -> Option<f64>| {
            median(others.iter().filter_map(|o| f(o)).collect())
        };
        if let (Some(c), Some(o)) = (clock(r), theirs(&clock)) {
            if c < o * (1.0 - CLOCK_DEPARTS) {
                out.push((
                    i,
                    format!("its clock {c:.0} MHz against {o:.0} MHz on the others"),
                ));
                continue;
            }
        }
        if let (Some(t), Some(o)) = (temp(r), theirs(&temp)) {
            if t >= o + TEMPERATURE_DEPARTS {
                out.push((i, format!("{t:.0} C against {o:.0} C on the others")));
                continue;
            }
        }
        let others_throttled = others.iter().filter(|o| throttled(o)).count();
        if throttled(r) && 2 * others_throttled < others.len() {
            let reasons: Vec<&str> = r
                .iter()
                .flat_map(|g| g.throttle.iter().map(String::as_str))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            out.push((
                i,
                format!(
                    "throttled ({}) where the others are not",
                    reasons.join(", ")
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(clock: f64, temp: f64, throttle: &[&str]) -> GpuState {
        GpuState {
            clock_mhz: Some(clock),
            temperature_c: Some(temp),
            throttle: throttle.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn gpu_lists_read_ranges_and_refuse_nonsense() {
        assert_eq!("all".parse(), Ok(GpuList::All));
        assert_eq!("0-3,6".parse(), Ok(GpuList::Listed(vec![0, 1, 2, 3, 6])));
        assert_eq!("2".parse(), Ok(GpuList::Listed(vec![2])));
        assert!("3-1".parse::<GpuList>().unwrap_err().contains("goes up"));
        assert!("0,0".parse::<GpuList>().unwrap_err().contains("twice"));
        assert!("gpu0"
            .parse::<GpuList>()
            .unwrap_err()
            .contains("not a GPU index"));
    }

    #[test]
    fn a_gpu_whose_state_departs_is_named_with_why() {
        let ok = vec![state(1980.0, 45.0, &[]); 4];
        let slow = vec![state(1755.0, 46.0, &[]); 4];
        let hot = vec![state(1980.0, 66.0, &[]); 4];
        let capped = vec![state(1980.0, 47.0, &["sw_power_cap"]); 4];
        let lanes = [&ok, &slow, &ok, &hot, &capped, &ok];
        let d = departed(&lanes);
        let who: Vec<usize> = d.iter().map(|(i, _)| *i).collect();
        assert_eq!(who, vec![1, 3, 4], "{d:?}");
        assert!(d[0].1.contains("1755 MHz against 1980 MHz"), "{d:?}");
        assert!(d[1].1.contains("66 C"), "{d:?}");
        assert!(d[2].1.contains("sw_power_cap"), "{d:?}");
        // All at the power cap (a GEMM at 700 W): nobody departs.
        assert!(departed(&[&capped, &capped, &capped]).is_empty());
        assert!(departed(&[&ok]).is_empty());
    }
}
