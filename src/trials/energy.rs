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
