//! The GPU's state around each trial: through NVML in-process on NVIDIA (`super::nvml`),
//! else from the vendor's query tool on PATH.

use perfdb_ingest::devices::Table;
use perfdb_ingest::gpu_state::{self, GpuState};
use std::process::Command;

/// How the GPU is read: NVML when the driver's library loads, else the query tool on
/// PATH, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuTool {
    Nvml,
    NvidiaSmi,
    AmdSmi,
}

impl GpuTool {
    pub fn find() -> Option<GpuTool> {
        if super::nvml::library().is_ok() {
            return Some(GpuTool::Nvml);
        }
        let path = std::env::var_os("PATH")?;
        let on_path = |name: &str| std::env::split_paths(&path).any(|d| d.join(name).is_file());
        if on_path("nvidia-smi") {
            Some(GpuTool::NvidiaSmi)
        } else if on_path("amd-smi") {
            Some(GpuTool::AmdSmi)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GpuTool::Nvml => "NVML",
            GpuTool::NvidiaSmi => "nvidia-smi",
            GpuTool::AmdSmi => "amd-smi",
        }
    }

    /// The GPU the benchmark sees first: the first entry of CUDA_VISIBLE_DEVICES /
    /// HIP_VISIBLE_DEVICES when it is a number, else 0.
    pub fn device() -> String {
        [
            "CUDA_VISIBLE_DEVICES",
            "HIP_VISIBLE_DEVICES",
            "ROCR_VISIBLE_DEVICES",
        ]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .filter_map(|v| v.split(',').next().map(|s| s.trim().to_string()))
        .find(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| "0".to_string())
    }

    /// The product name of the GPU the benchmark sees (`NVIDIA H200`), or why there is none.
    pub fn product(self) -> Result<String, String> {
        if self == GpuTool::Nvml {
            return super::nvml::product(Self::index()?);
        }
        let text = self.call(
            &gpu_state::NVIDIA_SMI_NAME_ARGS,
            &gpu_state::AMD_SMI_NAME_ARGS,
        )?;
        match self {
            GpuTool::AmdSmi => gpu_state::parse_amd_smi_name(&text),
            _ => gpu_state::parse_nvidia_smi_name(&text),
        }
    }

    /// [`GpuTool::device`] as NVML's index.
    pub fn index() -> Result<u32, String> {
        let d = Self::device();
        d.parse()
            .map_err(|_| format!("GPU '{d}' is not an index NVML knows"))
    }

    /// The tool's output for the GPU the benchmark sees, with `nvidia` or `amd` as its
    /// arguments; or why there is none.
    fn call(self, nvidia: &[&str], amd: &[&str]) -> Result<String, String> {
        self.call_at(nvidia, amd, &GpuTool::device())
    }

    fn call_at(self, nvidia: &[&str], amd: &[&str], device: &str) -> Result<String, String> {
        let (args, select) = match self {
            GpuTool::NvidiaSmi => (nvidia, "-i"),
            GpuTool::AmdSmi => (amd, "-g"),
            GpuTool::Nvml => return Err("NVML is read in-process, not run".into()),
        };
        let out = Command::new(self.name())
            .args(args)
            .args([select, device])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// One reading of the GPU the benchmark sees, or why there is none.
    pub fn query(self) -> Result<GpuState, String> {
        self.query_at(&Self::device())
    }

    /// One reading of GPU `device` (an index), or why there is none.
    pub fn query_at(self, device: &str) -> Result<GpuState, String> {
        if self == GpuTool::Nvml {
            let index = device
                .parse()
                .map_err(|_| format!("GPU '{device}' is not an index NVML knows"))?;
            return super::nvml::reading(index);
        }
        let text = self.call_at(&gpu_state::NVIDIA_SMI_ARGS, &["metric", "--json"], device)?;
        let parsed = match self {
            GpuTool::AmdSmi => gpu_state::parse_amd_smi(&text),
            _ => gpu_state::parse_nvidia_smi(&text),
        }?;
        parsed
            .into_iter()
            .next()
            .ok_or_else(|| "printed no GPU".to_string())
    }
}

/// The `device` tag of the trials, from the GPU the tool names: its id when the device
/// table knows it, else its name (unknown: no percent of peak, and a `[[device]]` added
/// later finds it). None when `--machine` already names a device the tool does not
/// contradict, or the tool names nothing. What it found is said on stderr, once a
/// process: each step of a bisect is an experiment of its own on the same GPU.
pub fn device_tag(tool: GpuTool, machine: Option<&str>, table: &Table) -> Option<String> {
    static ONCE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| ask_device(tool, machine, table))
        .clone()
}

fn ask_device(tool: GpuTool, machine: Option<&str>, table: &Table) -> Option<String> {
    let given = machine.and_then(|m| table.named(m));
    let name = match tool.product() {
        Ok(name) => name,
        Err(e) => {
            say!(
                "ab: {} did not name the GPU ({e}): TFLOPS and TB/s are held to a peak only if --machine names the device",
                tool.name()
            );
            return None;
        }
    };
    match (table.named(&name), given) {
        (Some(d), Some(g)) if g.id != d.id => {
            say!(
                "ab: {} says the GPU is {name}, not --machine's {}: held to the {}'s peaks",
                tool.name(),
                g.name,
                d.name
            );
            Some(d.id.clone())
        }
        (Some(d), _) => {
            say!(
                "ab: the GPU is {name}: TFLOPS and TB/s held to the {}'s peaks",
                d.name
            );
            Some(d.id.clone())
        }
        (None, Some(_)) => None,
        (None, None) => {
            say!(
                "ab: the GPU is {name}, not in the device table: no percent of peak (`perfdb devices` lists the table; a [[device]] in perfdb.toml adds one)"
            );
            Some(name)
        }
    }
}
