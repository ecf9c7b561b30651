//! A GPU's clock, power, temperature and throttle state as the vendor tools print it,
//! read into run tags (`perfdb ab` queries it before and after each trial).
//!
//! - `nvidia-smi --query-gpu=clocks.sm,power.draw,power.limit,temperature.gpu,
//!   clocks_event_reasons.active --format=csv,noheader,nounits`: one line per GPU, the
//!   reasons a hex bit mask (`0x0000000000000004` = software power cap).
//! - `amd-smi metric --json`: a list of GPUs (or `{"gpu_data": [...]}` in newer
//!   releases), each with `clock.gfx_N.clk`, `power.socket_power`,
//!   `power.throttle_status` and `temperature.hotspot` as `{"value", "unit"}` objects
//!   or `"N/A"`.

use serde_json::Value;

/// One reading of one GPU. Fields the tool could not report are `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuState {
    /// SM (NVIDIA) or GFX (AMD: the mean over the GFX clock domains) clock, MHz.
    pub clock_mhz: Option<f64>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub temperature_c: Option<f64>,
    /// The reasons the clock is held down, by name (`sw_power_cap`, `hw_slowdown`,
    /// `throttled`...); empty when none. Idle is not a reason.
    pub throttle: Vec<String>,
    /// The energy counter (NVML's total energy since the driver loaded), J: a trial's
    /// energy is its difference across the trial. Not a tag by itself.
    pub energy_j: Option<f64>,
}

impl GpuState {
    /// Whether a reason that lowers the clock under load was active.
    pub fn throttled(&self) -> bool {
        !self.throttle.is_empty()
    }

    /// As run tags, each key ending in `_{when}` (`before`, `after`).
    pub fn tags(&self, when: &str) -> Vec<(String, String)> {
        let mut t = Vec::new();
        let mut num = |k: &str, v: Option<f64>| {
            if let Some(v) = v {
                t.push((format!("gpu_{k}_{when}"), format!("{v}")));
            }
        };
        num("clock_mhz", self.clock_mhz);
        num("power_w", self.power_w);
        num("power_limit_w", self.power_limit_w);
        num("temperature_c", self.temperature_c);
        t.push((
            format!("gpu_throttle_{when}"),
            if self.throttle.is_empty() {
                "none".to_string()
            } else {
                self.throttle.join(",")
            },
        ));
        t
    }
}

/// nvidia-smi's clock event reasons that lower the clock under load, by bit (the GPU
/// being idle, application clock settings and sync boost are left out).
const NVIDIA_REASONS: [(u64, &str); 5] = [
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
];

/// The names of the reasons set in NVIDIA's clock event bit mask (nvidia-smi's
/// `clocks_event_reasons.active`, NVML's current throttle reasons) that lower the clock.
pub fn nvidia_reasons(bits: u64) -> Vec<String> {
    NVIDIA_REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The arguments of the nvidia-smi query [`parse_nvidia_smi`] reads.
pub const NVIDIA_SMI_ARGS: [&str; 2] = [
    "--query-gpu=clocks.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active",
    "--format=csv,noheader,nounits",
];

fn number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The GPUs of an nvidia-smi query (one line each). A line that does not have the five
/// fields is an error naming it; `[N/A]` and `[Not Supported]` fields are `None`.
pub fn parse_nvidia_smi(text: &str) -> Result<Vec<GpuState>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 5 {
            return Err(format!(
                "line {}: expected 5 comma-separated fields (clock, power, limit, temperature, reasons), found {}: {line:?}",
                i + 1,
                f.len()
            ));
        }
        let reasons = f[4]
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok());
        let throttle = reasons.map(nvidia_reasons).unwrap_or_default();
        out.push(GpuState {
            clock_mhz: number(f[0]),
            power_w: number(f[1]),
            power_limit_w: number(f[2]),
            temperature_c: number(f[3]),
            throttle,
            energy_j: None,
        });
    }
    Ok(out)
}

/// `{"value": 9, "unit": "W"}` or a bare number; `"N/A"` is `None`.
fn measured(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Object(o) => measured(o.get("value")),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => number(s),
        _ => None,
    }
}

/// The GPUs of `amd-smi metric --json`.
pub fn parse_amd_smi(text: &str) -> Result<Vec<GpuState>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let gpus = match &doc {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("gpu_data") {
            Some(Value::Array(a)) => a,
            _ => return Err("expected a list of GPUs or {\"gpu_data\": [...]}".to_string()),
        },
        _ => return Err("expected a list of GPUs or {\"gpu_data\": [...]}".to_string()),
    };
    Ok(gpus
        .iter()
        .map(|g| {
            let clocks: Vec<f64> = g
                .get("clock")
                .and_then(Value::as_object)
                .map(|c| {
                    c.iter()
                        .filter(|(k, _)| k.starts_with("gfx_"))
                        .filter_map(|(_, v)| measured(v.get("clk")))
                        .collect()
                })
                .unwrap_or_default();
            let power = g.get("power");
            let status = power
                .and_then(|p| p.get("throttle_status"))
                .and_then(Value::as_str)
                .unwrap_or("N/A");
            GpuState {
                clock_mhz: (!clocks.is_empty())
                    .then(|| clocks.iter().sum::<f64>() / clocks.len() as f64),
                power_w: measured(power.and_then(|p| p.get("socket_power"))),
                power_limit_w: measured(power.and_then(|p| p.get("power_limit"))),
                temperature_c: measured(
                    g.get("temperature")
                        .and_then(|t| t.get("hotspot").or_else(|| t.get("edge"))),
                ),
                throttle: if status.eq_ignore_ascii_case("THROTTLED") {
                    vec!["throttled".to_string()]
                } else {
                    Vec::new()
                },
                energy_j: None,
            }
        })
        .collect())
}

/// The arguments of the nvidia-smi query [`parse_nvidia_smi_name`] reads.
pub const NVIDIA_SMI_NAME_ARGS: [&str; 2] = ["--query-gpu=name", "--format=csv,noheader"];

/// The product name of the first GPU of `nvidia-smi --query-gpu=name
/// --format=csv,noheader` (`NVIDIA H200`, `NVIDIA H100 80GB HBM3`).
pub fn parse_nvidia_smi_name(text: &str) -> Result<String, String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
        .ok_or_else(|| "printed no GPU".to_string())
}

/// The arguments of the amd-smi query [`parse_amd_smi_name`] reads.
pub const AMD_SMI_NAME_ARGS: [&str; 3] = ["static", "--asic", "--json"];

/// The product name of the first GPU of `amd-smi static --asic --json`: its
/// `asic.market_name` (`AMD Instinct MI300X`; some releases print `MI300X-O`), in a list
/// of GPUs or under `gpu_data`.
pub fn parse_amd_smi_name(text: &str) -> Result<String, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let gpus = match &doc {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) => match o.get("gpu_data") {
            Some(Value::Array(a)) => a.as_slice(),
            _ => std::slice::from_ref(&doc),
        },
        _ => return Err("expected a list of GPUs or {\"gpu_data\": [...]}".to_string()),
    };
    gpus.first()
        .and_then(|g| g.get("asic")?.get("market_name")?.as_str())
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.eq_ignore_ascii_case("N/A"))
        .map(str::to_string)
        .ok_or_else(|| "printed no asic.market_name".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-data")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn nvidia_smi_on_an_h200_after_a_benchmark() {
        let g = parse_nvidia_smi(&sample("h200-triton36/nvidia-smi-query.txt")).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].clock_mhz, Some(1980.0));
        assert_eq!(g[0].power_w, Some(123.34));
        assert_eq!(g[0].power_limit_w, Some(700.0));
        assert_eq!(g[0].temperature_c, Some(37.0));
        assert!(!g[0].throttled());
        assert_eq!(
            g[0].tags("before"),
            vec![
                ("gpu_clock_mhz_before".to_string(), "1980".to_string()),
                ("gpu_power_w_before".to_string(), "123.34".to_string()),
                ("gpu_power_limit_w_before".to_string(), "700".to_string()),
                ("gpu_temperature_c_before".to_string(), "37".to_string()),
                ("gpu_throttle_before".to_string(), "none".to_string()),
            ]
        );
    }

    #[test]
    fn nvidia_smi_on_an_idle_h200() {
        let g = parse_nvidia_smi(&sample("gpu-state/nvidia-smi-h200-idle.txt")).unwrap();
        assert_eq!(g[0].clock_mhz, Some(345.0));
        // Reason 0x1 is the GPU being idle: not a throttle.
        assert!(!g[0].throttled());
        assert_eq!(g[0].tags("after").last().unwrap().1, "none");
    }

    #[test]
    fn nvidia_smi_reasons_and_missing_fields() {
        let g = parse_nvidia_smi(
            "1755, 699.12, 700.00, 61, 0x0000000000000004\n\
             [N/A], [N/A], [N/A], 40, 0x0000000000000001\n",
        )
        .unwrap();
        assert_eq!(g[0].throttle, vec!["sw_power_cap"]);
        // Idle is not throttling.
        assert!(!g[1].throttled());
        assert_eq!(g[1].clock_mhz, None);
        let e = parse_nvidia_smi("1980, 123.34\n").unwrap_err();
        assert!(e.starts_with("line 1: expected 5"), "{e}");
    }

    #[test]
    fn amd_smi_metric_json() {
        let g = parse_amd_smi(&sample("gpu-state/amd-smi-metric-rx7800xt.json")).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].clock_mhz, Some(49.0));
        assert_eq!(g[0].power_w, Some(9.0));
        assert_eq!(g[0].temperature_c, Some(41.0));
        assert!(!g[0].throttled());
        // The older layout: a bare list, several GFX domains, throttled.
        let g = parse_amd_smi(
            r#"[{"gpu": 0, "power": {"socket_power": {"value": 225, "unit": "W"}, "throttle_status": "THROTTLED"},
                "clock": {"gfx_0": {"clk": {"value": 2100, "unit": "MHz"}}, "gfx_1": {"clk": {"value": 2000, "unit": "MHz"}}, "mem_0": {"clk": {"value": 1300, "unit": "MHz"}}},
                "temperature": {"edge": "N/A", "hotspot": {"value": 71, "unit": "C"}}}]"#,
        )
        .unwrap();
        assert_eq!(g[0].clock_mhz, Some(2050.0));
        assert_eq!(g[0].temperature_c, Some(71.0));
        assert_eq!(g[0].throttle, vec!["throttled"]);
        assert!(parse_amd_smi("{}").is_err());
    }

    #[test]
    fn the_gpu_product_name_from_each_tool() {
        assert_eq!(
            parse_nvidia_smi_name("NVIDIA H200\nNVIDIA H200\n").unwrap(),
            "NVIDIA H200"
        );
        assert!(parse_nvidia_smi_name("\n").is_err());
        let listed = r#"[{"gpu": 0, "asic": {"market_name": "MI300X-O", "target_graphics_version": "gfx942"}}]"#;
        assert_eq!(parse_amd_smi_name(listed).unwrap(), "MI300X-O");
        let wrapped =
            r#"{"gpu_data": [{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}}]}"#;
        assert_eq!(parse_amd_smi_name(wrapped).unwrap(), "AMD Instinct MI300X");
        let one = r#"{"gpu": 0, "asic": {"market_name": "AMD Instinct MI325X"}}"#;
        assert_eq!(parse_amd_smi_name(one).unwrap(), "AMD Instinct MI325X");
        assert!(parse_amd_smi_name(r#"[{"asic": {"market_name": "N/A"}}]"#).is_err());
        assert!(parse_amd_smi_name("amd-smi: not found").is_err());
    }
}
