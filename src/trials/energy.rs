//! A trial's GPU energy: the difference of NVML's total-energy counter across the
//! trial (what is stored and judged), and the board's power integrated over it by the
//! sampler (a check on the counter, kept as a tag).

use super::gpu::GpuTool;
use super::nvml::{Integrated, PowerSampler};
use perfdb_ingest::gpu_state::GpuState;

/// A trial's energy as measured.
#[derive(Debug, Default)]
pub struct TrialEnergy {
    /// The counter's difference, J; `None` without a counter on both sides.
    pub counter_j: Option<f64>,
    pub integrated: Option<Integrated>,
}

/// Starts the power sampler for a trial on GPU `device` (an index) when the GPU is read
/// through NVML.
pub fn start(gpu: Option<GpuTool>, device: &str) -> Option<PowerSampler> {
    match gpu {
        Some(GpuTool::Nvml) => PowerSampler::start(device.parse().ok()?),
        _ => None,
    }
}

impl TrialEnergy {
    /// From the readings before and after the trial and its sampler.
    pub fn measured(
        before: Option<&Result<GpuState, String>>,
        after: Option<&Result<GpuState, String>>,
        sampler: Option<PowerSampler>,
    ) -> TrialEnergy {
        let counter = |r: Option<&Result<GpuState, String>>| r?.as_ref().ok()?.energy_j;
        TrialEnergy {
            // A counter that went back (the driver reloaded) measured nothing.
            counter_j: match (counter(before), counter(after)) {
                (Some(b), Some(a)) if a >= b => Some(a - b),
                _ => None,
            },
            integrated: sampler.and_then(PowerSampler::finish),
        }
    }

    /// As run tags: the counter's joules, the integrated joules and the samples taken,
    /// and the GPU (`device`, an index) they are of.
    pub fn tags(&self, device: &str) -> Vec<(String, String)> {
        let mut t = Vec::new();
        if self.counter_j.is_some() || self.integrated.is_some() {
            t.push(("gpu_index".to_string(), device.to_string()));
        }
        if let Some(j) = self.counter_j {
            t.push(("gpu_energy_j".to_string(), format!("{j:.3}")));
        }
        if let Some(i) = &self.integrated {
            t.push((
                "gpu_power_integrated_j".to_string(),
                format!("{:.3}", i.joules),
            ));
            t.push(("gpu_power_samples".to_string(), i.samples.to_string()));
        }
        t
    }
}

const HELPER: &str = include_str!("python/perfdb_energy.py");
const SITECUSTOMIZE: &str = include_str!("python/sitecustomize.py");

/// `perfdb_energy.py` (and, to measure after every Triton `do_bench`, the sitecustomize
/// that installs it) written into the logs folder and put first on the trials'
/// PYTHONPATH: a benchmark's `perfdb_energy.per_call(fn)` then prints the energy per call
/// its row is given (`perfdb_ingest::call_energy`).
pub fn helper(s: &mut super::Session, do_bench: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = s.logs.join("energy");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    write("perfdb_energy.py", HELPER)?;
    if do_bench {
        write("sitecustomize.py", SITECUSTOMIZE)?;
        s.env
            .push(("PERFDB_ENERGY_DO_BENCH".to_string(), "1".to_string()));
    }
    // Absolute: an arm may run in a folder of its own.
    s.python.push(std::fs::canonicalize(&dir)?);
    Ok(())
}

/// Why a trial's energy per call was not measured or not stored (`perfdb_energy`'s error
/// line, a reading told to no row), said on stderr once a process for each reason: the
/// run goes on, judged on what it has.
pub fn say_refused(
    log: &str,
    prepared: &Result<perfdb_ingest::warehouse::Prepared, perfdb_ingest::FileError>,
) {
    static SAID: std::sync::LazyLock<std::sync::Mutex<std::collections::BTreeSet<String>>> =
        std::sync::LazyLock::new(Default::default);
    let Ok(p) = prepared else { return };
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    for w in &p.warnings {
        if w.reason.starts_with("energy per call not") && said.insert(w.reason.clone()) {
            say!("ab: {} (line {} of {log}; said once)", w.reason, w.line);
        }
    }
}
