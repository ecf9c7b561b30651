//! What a trial ran on besides the code: the GPU driver (from NVML, nvidia-smi or amd-smi),
//! and, when the arm's command is Python, the torch, triton, CUDA and ROCm versions its
//! interpreter imports. Read before the first trial, never during one; stored as run tags
//! (`reports::environment` names them), so a step that coincides with a new driver or
//! toolchain says so.

use super::arms::Arms;
use super::gpu::GpuTool;
use perfdb_reports::ab::Arm;
use std::process::{Command, Stdio};

/// Reads the installed versions without importing anything (importing torch takes
/// seconds): the distributions' metadata, and torch's own `version.py` for its CUDA and
/// HIP versions.
const PYTHON_PROBE: &str = r#"
import importlib.metadata as md, importlib.util as u, os, platform, re
P = "perfdb-probe "
print(P + "python=" + platform.python_version())
for d in ("torch", "triton", "pytorch-triton-rocm", "jax"):
    try:
        print(P + d.replace("pytorch-triton-rocm", "triton") + "=" + md.version(d))
    except Exception:
        pass
try:
    s = u.find_spec("torch")
    t = open(os.path.join(os.path.dirname(s.origin), "version.py")).read()
    for k, tag in (("cuda", "cuda"), ("hip", "rocm")):
        m = re.search(r"^%s\s*(?::\s*\S+\s*)?=\s*'([^']+)'" % k, t, re.M)
        if m:
            print(P + tag + "=" + m.group(1))
except Exception:
    pass
"#;

/// The versions the probe asked for: its own `perfdb-probe KEY=VALUE` lines, KEY one it
/// prints; anything else the interpreter prints (a `sitecustomize` saying
/// `machine=...`) is no tag.
fn tags_of(text: &str) -> Vec<(String, String)> {
    const ASKED: [&str; 6] = ["python", "torch", "triton", "jax", "cuda", "rocm"];
    text.lines()
        .filter_map(|l| l.strip_prefix("perfdb-probe "))
        .filter_map(|l| l.trim().split_once('='))
        .filter(|(k, v)| ASKED.contains(k) && !v.trim().is_empty())
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// The environment of `arm`: its Python's versions when its command is Python.
pub fn of_arm(arms: &Arms, arm: Arm) -> Vec<(String, String)> {
    // The interpreter the arm runs, where it runs it (a shell command's `cd` followed).
    let Some((mut cmd, python)) = arms.python_command(arm, &["-c", PYTHON_PROBE], false) else {
        return Vec::new();
    };
    let out = cmd.stdin(Stdio::null()).stderr(Stdio::null()).output();
    match out {
        Ok(o) if o.status.success() => tags_of(&String::from_utf8_lossy(&o.stdout)),
        _ => {
            say!("ab: `{python}` did not say its torch/triton versions: they are not recorded");
            Vec::new()
        }
    }
}

/// The GPU driver's version, once a process.
pub fn driver(tool: GpuTool) -> Vec<(String, String)> {
    static ONCE: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        type Reader = fn(&str) -> Vec<(String, String)>;
        let (args, read): (&[&str], Reader) = match tool {
            GpuTool::NvidiaSmi => (
                &["--query-gpu=driver_version", "--format=csv,noheader"],
                |t| {
                    t.lines()
                        .map(str::trim)
                        .find(|l| !l.is_empty())
                        .map(|v| vec![("driver".to_string(), v.to_string())])
                        .unwrap_or_default()
                },
            ),
            GpuTool::AmdSmi => (&["version", "--json"], amd_versions),
            GpuTool::Nvml => {
                return super::nvml::driver()
                    .map(|v| vec![("driver".to_string(), v)])
                    .unwrap_or_default()
            }
        };
        match Command::new(tool.name())
            .args(args)
            .stdin(Stdio::null())
            .output()
        {
            Ok(o) if o.status.success() => read(&String::from_utf8_lossy(&o.stdout)),
            _ => Vec::new(),
        }
    })
    .clone()
}

/// `amd-smi version --json`: one object (or a list of one) with `amdgpu_version` (the
/// driver; older releases: `driver_version`) and `rocm_version`.
fn amd_versions(text: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let o = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
    let mut out = Vec::new();
    for (key, tag) in [
        ("amdgpu_version", "driver"),
        ("driver_version", "driver"),
        ("rocm_version", "rocm"),
    ] {
        if let Some(s) = o
            .get(key)
            .and_then(|s| s.as_str())
            .filter(|s| !s.is_empty() && *s != "N/A")
        {
            if !out.iter().any(|(t, _): &(String, String)| t == tag) {
                out.push((tag.to_string(), s.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::arms::python_of;
    use super::*;

    #[test]
    fn the_python_of_a_command() {
        assert_eq!(python_of("python3 bench.py").as_deref(), Some("python3"));
        assert_eq!(
            python_of("env A=1 .venv/bin/python3.11 -m x").as_deref(),
            Some(".venv/bin/python3.11")
        );
        assert_eq!(python_of("sh bench.sh"), None);
        assert_eq!(python_of("python-config"), None);
    }

    #[test]
    fn versions_read_as_tags() {
        assert_eq!(
            tags_of(
                "machine=someone-elses-box\nperfdb-probe python=3.12.3\nperfdb-probe torch=2.9.0\n\
                 perfdb-probe triton=3.5.1\nperfdb-probe cuda=12.8\nbad\nperfdb-probe x=1\n\
                 perfdb-probe machine=other\n"
            ),
            [
                ("python", "3.12.3"),
                ("torch", "2.9.0"),
                ("triton", "3.5.1"),
                ("cuda", "12.8")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(
            amd_versions(
                r#"[{"tool":"AMDSMI Tool","amdgpu_version":"6.10.5","rocm_version":"6.4.1"}]"#
            ),
            [("driver", "6.10.5"), ("rocm", "6.4.1")].map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }
}
