//! NVIDIA GPUs read in-process through NVML (the driver's `libnvidia-ml`, loaded at run
//! time by `nvml-wrapper`): clocks, power, temperature, throttle reasons and the
//! total-energy counter, without starting `nvidia-smi` for each reading; and a power
//! sampler that integrates the board's power over a trial, a second figure for its
//! energy to hold the counter's against.
//!
//! `PERFDB_NVML_LIBRARY` names another library to load (a driver installed off the
//! loader's path, or the stand-in the tests build). A machine where NVML does not load
//! or sees no GPU falls back to the query tools (`super::gpu`).

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;
use perfdb_ingest::gpu_state::{nvidia_reasons, GpuState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the sampler reads the board's power during a trial.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// The library, initialised once a process; why not, when it does not load or sees no
/// GPU.
pub fn library() -> Result<&'static Nvml, String> {
    static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
    NVML.get_or_init(|| {
        let path = std::env::var_os("PERFDB_NVML_LIBRARY");
        let mut builder = Nvml::builder();
        if let Some(p) = &path {
            builder.lib_path(p);
        }
        let nvml = builder.init().map_err(|e| match &path {
            Some(p) => format!("NVML ({}) did not load: {e}", p.to_string_lossy()),
            None => format!("NVML did not load: {e}"),
        })?;
        match nvml.device_count() {
            Ok(0) => Err("NVML sees no GPU".to_string()),
            Ok(_) => Ok(nvml),
            Err(e) => Err(format!("NVML cannot count the GPUs: {e}")),
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The product name of GPU `index` (`NVIDIA H100 80GB HBM3`).
pub fn product(index: u32) -> Result<String, String> {
    let nvml = library()?;
    let d = nvml
        .device_by_index(index)
        .map_err(|e| format!("NVML has no GPU {index}: {e}"))?;
    d.name()
        .map_err(|e| format!("NVML did not name GPU {index}: {e}"))
}

/// How many GPUs NVML sees.
pub fn count() -> Result<u32, String> {
    library()?
        .device_count()
        .map_err(|e| format!("NVML cannot count the GPUs: {e}"))
}

/// GPU `index`'s UUID (`GPU-...`), which `CUDA_VISIBLE_DEVICES` accepts whatever order
/// CUDA numbers the GPUs in.
pub fn uuid(index: u32) -> Result<String, String> {
    let d = library()?
        .device_by_index(index)
        .map_err(|e| format!("NVML has no GPU {index}: {e}"))?;
    d.uuid()
        .map_err(|e| format!("NVML did not give GPU {index}'s UUID: {e}"))
}

/// The driver's version.
pub fn driver() -> Option<String> {
    library().ok()?.sys_driver_version().ok()
}

/// One reading of GPU `index`; a field the GPU does not support is `None`.
pub fn reading(index: u32) -> Result<GpuState, String> {
    let nvml = library()?;
    let d = nvml
        .device_by_index(index)
        .map_err(|e| format!("NVML has no GPU {index}: {e}"))?;
    Ok(GpuState {
        clock_mhz: d.clock_info(Clock::SM).ok().map(f64::from),
        power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1e3),
        power_limit_w: d.enforced_power_limit().ok().map(|mw| f64::from(mw) / 1e3),
        temperature_c: d.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
        throttle: d
            .current_throttle_reasons()
            .map(|r| nvidia_reasons(r.bits()))
            .unwrap_or_default(),
        energy_j: d.total_energy_consumption().ok().map(|mj| mj as f64 / 1e3),
    })
}

/// The board's power read every [`SAMPLE_EVERY`] from [`PowerSampler::start`] to
/// [`PowerSampler::finish`].
pub struct PowerSampler {
    stop: Arc<AtomicBool>,
    started: Instant,
    thread: JoinHandle<Vec<(f64, f64)>>,
}

/// What the sampler saw over one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Integrated {
    /// The power integrated over the trial (trapezoids; the first and last reading held
    /// to the trial's ends), J.
    pub joules: f64,
    pub samples: usize,
    pub seconds: f64,
}

impl PowerSampler {
    /// Starts sampling GPU `index`; `None` without NVML.
    pub fn start(index: u32) -> Option<PowerSampler> {
        library().ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("perfdb-power".into())
            .spawn(move || {
                let mut out = Vec::new();
                let Ok(d) =
                    library().and_then(|n| n.device_by_index(index).map_err(|e| e.to_string()))
                else {
                    return out;
                };
                loop {
                    if let Ok(mw) = d.power_usage() {
                        out.push((started.elapsed().as_secs_f64(), f64::from(mw) / 1e3));
                    }
                    if flag.load(Ordering::Relaxed) {
                        return out;
                    }
                    std::thread::sleep(SAMPLE_EVERY);
                }
            })
            .ok()?;
        Some(PowerSampler {
            stop,
            started,
            thread,
        })
    }

    /// Stops sampling; the energy the readings integrate to (`None`: no reading).
    pub fn finish(self) -> Option<Integrated> {
        let seconds = self.started.elapsed().as_secs_f64();
        self.stop.store(true, Ordering::Relaxed);
        let samples = self.thread.join().ok()?;
        integrate(&samples, seconds)
    }
}

/// Power readings `(seconds since the start, W)` integrated from 0 to `end` seconds:
/// trapezoids between readings, the first reading held back to 0 and the last on to
/// `end`.
pub fn integrate(samples: &[(f64, f64)], end: f64) -> Option<Integrated> {
    let (first, last) = (samples.first()?, samples.last()?);
    let mut joules = first.0.max(0.0) * first.1 + (end - last.0).max(0.0) * last.1;
    for w in samples.windows(2) {
        joules += (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0;
    }
    Some(Integrated {
        joules,
        samples: samples.len(),
        seconds: end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_integrates_by_trapezoids_held_to_the_ends() {
        // 100 W for the first second, 300 W from 2 s, 3 s in all.
        let s = [(0.5, 100.0), (1.0, 100.0), (2.0, 300.0), (2.5, 300.0)];
        let i = integrate(&s, 3.0).unwrap();
        // 0-0.5: 50; 0.5-1: 50; 1-2: 200; 2-2.5: 150; 2.5-3: 150.
        assert!((i.joules - 600.0).abs() < 1e-9, "{i:?}");
        assert_eq!(i.samples, 4);
        assert_eq!(integrate(&[], 3.0), None);
    }
}
