//! The GPU's state around each trial, from the vendor's query tool on PATH.

use perfdb_ingest::gpu_state::{self, GpuState};
use std::process::Command;

/// The GPU query tool on PATH, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuTool {
    NvidiaSmi,
    AmdSmi,
}

impl GpuTool {
    pub fn find() -> Option<GpuTool> {
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
            GpuTool::NvidiaSmi => "nvidia-smi",
            GpuTool::AmdSmi => "amd-smi",
        }
    }

    /// The GPU the benchmark sees first: the first entry of CUDA_VISIBLE_DEVICES /
    /// HIP_VISIBLE_DEVICES when it is a number, else 0.
    fn device() -> String {
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

    /// One reading, or why there is none.
    pub fn query(self) -> Result<GpuState, String> {
        let dev = GpuTool::device();
        let out = match self {
            GpuTool::NvidiaSmi => Command::new("nvidia-smi")
                .args(gpu_state::NVIDIA_SMI_ARGS)
                .args(["-i", &dev])
                .output(),
            GpuTool::AmdSmi => Command::new("amd-smi")
                .args(["metric", "--json", "-g", &dev])
                .output(),
        }
        .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let parsed = match self {
            GpuTool::NvidiaSmi => gpu_state::parse_nvidia_smi(&text),
            GpuTool::AmdSmi => gpu_state::parse_amd_smi(&text),
        }?;
        parsed
            .into_iter()
            .next()
            .ok_or_else(|| "printed no GPU".to_string())
    }
}
