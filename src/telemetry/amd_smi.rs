//! Local AMD GPUs through the `amd-smi` CLI where it is installed: `amd-smi list --json` and
//! `amd-smi static --asic --json` once (UUID, bus id, name), then `amd-smi metric --json` per
//! reading, mapped onto AIPerf's `amd_*` fields as its amdsmi collector fills them.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::fields::{GpuField, MIB_BYTES};
use super::sample::GpuSample;

/// AIPerf's source identifier for local AMD GPUs (its `telemetry_source_url`).
pub const AMD_SMI_SOURCE: &str = "amdsmi://localhost";

/// The metric groups one reading asks for: power, engine usage, temperature, energy, VRAM, ECC.
const METRIC_ARGS: [&str; 8] =
    ["metric", "--json", "--power", "--usage", "--temperature", "--energy", "--mem-usage", "--ecc"];

/// Longest wait for one amd-smi command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// What `list` and `static` say about one GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AmdGpuIdentity {
    pub uuid: String,
    pub bdf: Option<String>,
    pub name: String,
}

/// The installed amd-smi and the GPUs it listed.
pub struct AmdSmi {
    program: PathBuf,
    gpus: BTreeMap<u32, AmdGpuIdentity>,
    hostname: String,
}

impl AmdSmi {
    /// amd-smi from PATH with its GPUs; None when it is not installed or lists none, said in
    /// one line (a warning when `asked` for, else a debug line). Blocks on the commands.
    pub fn find(hostname: String, asked: bool) -> Option<Self> {
        let note = |why: String| {
            if asked {
                tracing::warn!("GPU telemetry: {why}; local AMD GPUs are not read");
            } else {
                tracing::debug!("GPU telemetry: {why}; local AMD GPUs are not read");
            }
        };
        let Some(program) = on_path("amd-smi") else {
            note("amd-smi is not installed (not on PATH)".to_string());
            return None;
        };
        let listed = run(&program, &["list", "--json"]).and_then(|text| parse_list(&text));
        let mut gpus = match listed {
            Ok(gpus) if !gpus.is_empty() => gpus,
            Ok(_) => {
                note("amd-smi lists no GPU".to_string());
                return None;
            }
            Err(e) => {
                note(format!("amd-smi list failed ({e:#})"));
                return None;
            }
        };
        if let Ok(text) = run(&program, &["static", "--asic", "--json"]) {
            for (index, name) in parse_market_names(&text) {
                if let Some(gpu) = gpus.get_mut(&index) {
                    gpu.name = name;
                }
            }
        }
        Some(Self { program, gpus, hostname })
    }

    /// One reading of every listed GPU, stamped `timestamp_ns`. Blocks on the command.
    pub fn sample(&self, timestamp_ns: u64) -> Result<Vec<GpuSample>> {
        let text = run(&self.program, &METRIC_ARGS)?;
        parse_metric(&text, &self.gpus, &self.hostname, timestamp_ns)
    }
}

/// amd-smi is on PATH.
pub fn installed() -> bool {
    on_path("amd-smi").is_some()
}

/// The first executable `name` in PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs).map(|dir| dir.join(name)).find(|path| is_executable(path))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `program args…`'s standard output; killed after `COMMAND_TIMEOUT`.
fn run(program: &Path, args: &[&str]) -> Result<String> {
    let shown = format!("{} {}", program.display(), args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {shown}"))?;
    let mut stdout = child.stdout.take().context("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{shown} took longer than {} s", COMMAND_TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = reader.join().map_err(|_| anyhow::anyhow!("reading {shown} failed"))??;
    if !status.success() {
        bail!("{shown} exited with {status}");
    }
    Ok(text)
}

/// The per-GPU objects of an amd-smi JSON answer: a list, or (newer versions) under `gpu_data`.
fn gpu_objects(text: &str) -> Result<Vec<Value>> {
    let doc: Value = serde_json::from_str(text).context("amd-smi answered something that is not JSON")?;
    let list = match doc {
        Value::Array(list) => list,
        Value::Object(mut object) => match object.remove("gpu_data") {
            Some(Value::Array(list)) => list,
            _ => bail!("amd-smi's JSON has no list of GPUs"),
        },
        _ => bail!("amd-smi's JSON has no list of GPUs"),
    };
    Ok(list.into_iter().filter(|gpu| gpu["gpu"].is_u64()).collect())
}

fn gpu_index(gpu: &Value) -> Option<u32> {
    gpu["gpu"].as_u64().and_then(|i| u32::try_from(i).ok())
}

/// `amd-smi list --json`: each GPU's UUID and bus id.
pub fn parse_list(text: &str) -> Result<BTreeMap<u32, AmdGpuIdentity>> {
    let mut gpus = BTreeMap::new();
    for gpu in gpu_objects(text)? {
        let Some(index) = gpu_index(&gpu) else { continue };
        let text_of = |key: &str| gpu[key].as_str().filter(|v| !v.is_empty() && *v != "N/A").map(str::to_string);
        let identity = AmdGpuIdentity {
            uuid: text_of("uuid").unwrap_or_else(|| format!("amd-gpu-{index}")),
            bdf: text_of("bdf"),
            name: String::new(),
        };
        gpus.insert(index, identity);
    }
    Ok(gpus)
}

/// `amd-smi static --asic --json`: each GPU's market name (none when unreadable).
pub fn parse_market_names(text: &str) -> BTreeMap<u32, String> {
    let gpus = gpu_objects(text).unwrap_or_default();
    gpus.iter()
        .filter_map(|gpu| {
            let name = gpu["asic"]["market_name"].as_str().filter(|n| !n.is_empty() && *n != "N/A")?;
            Some((gpu_index(gpu)?, name.to_string()))
        })
        .collect()
}

/// A reading `{"value": v, "unit": u}` (or a bare number) scaled from its unit to the field's;
/// "N/A" or an unknown unit gives none.
fn reading(value: &Value, scale_of: fn(&str) -> Option<f64>) -> Option<f64> {
    let (number, unit) = match value {
        Value::Object(object) => (object.get("value")?.as_f64()?, object.get("unit").and_then(Value::as_str)),
        other => (other.as_f64()?, None),
    };
    let scale = match unit {
        Some(unit) => scale_of(unit)?,
        None => 1.0,
    };
    Some(number * scale).filter(|v| v.is_finite())
}

fn watts(unit: &str) -> Option<f64> {
    match unit {
        "W" => Some(1.0),
        "mW" => Some(1e-3),
        _ => None,
    }
}

fn megajoules(unit: &str) -> Option<f64> {
    match unit {
        "J" => Some(1e-6),
        "kJ" => Some(1e-3),
        "MJ" => Some(1.0),
        "uJ" | "µJ" => Some(1e-12),
        _ => None,
    }
}

fn percent(unit: &str) -> Option<f64> {
    (unit == "%").then_some(1.0)
}

/// amd-smi's "MB" are MiB (it divides bytes by 1024²); the field is in GB.
fn gigabytes(unit: &str) -> Option<f64> {
    match unit {
        "MB" | "MiB" => Some(MIB_BYTES / 1e9),
        "GB" => Some(1.0),
        "B" => Some(1e-9),
        _ => None,
    }
}

fn celsius(unit: &str) -> Option<f64> {
    matches!(unit, "C" | "°C").then_some(1.0)
}

fn count(_: &str) -> Option<f64> {
    Some(1.0)
}

/// `amd-smi metric --json`: one sample per listed GPU with the fields it read; a GPU it did
/// not list before is left out.
pub fn parse_metric(
    text: &str,
    gpus: &BTreeMap<u32, AmdGpuIdentity>,
    hostname: &str,
    timestamp_ns: u64,
) -> Result<Vec<GpuSample>> {
    let mut samples = Vec::new();
    for gpu in gpu_objects(text)? {
        let Some(index) = gpu_index(&gpu) else { continue };
        let Some(identity) = gpus.get(&index) else { continue };
        let mut values = Vec::new();
        let mut push = |field: GpuField, value: Option<f64>| {
            if let Some(value) = value {
                values.push((field, value));
            }
        };
        push(GpuField::AmdPower, reading(&gpu["power"]["socket_power"], watts));
        push(GpuField::AmdEnergyConsumption, reading(&gpu["energy"]["total_energy_consumption"], megajoules));
        push(GpuField::AmdGfxActivity, reading(&gpu["usage"]["gfx_activity"], percent));
        push(GpuField::AmdUmcActivity, reading(&gpu["usage"]["umc_activity"], percent));
        push(GpuField::AmdMmActivity, reading(&gpu["usage"]["mm_activity"], percent));
        push(GpuField::AmdMemoryUsed, reading(&gpu["mem_usage"]["used_vram"], gigabytes));
        let temperature = &gpu["temperature"];
        let hottest = reading(&temperature["hotspot"], celsius).or_else(|| reading(&temperature["edge"], celsius));
        push(GpuField::AmdTemperature, hottest);
        push(GpuField::AmdEccUncorrectable, reading(&gpu["ecc"]["total_uncorrectable_count"], count));
        let throttled = match gpu["power"]["throttle_status"].as_str() {
            Some("THROTTLED") => Some(1.0),
            Some("UNTHROTTLED") => Some(0.0),
            _ => None,
        };
        push(GpuField::AmdThrottleStatus, throttled);
        samples.push(GpuSample {
            source: AMD_SMI_SOURCE.to_string(),
            gpu_index: index,
            gpu_uuid: identity.uuid.clone(),
            gpu_name: identity.name.clone(),
            pci_bus_id: identity.bdf.clone(),
            device: Some(format!("amd{index}")),
            hostname: hostname.to_string(),
            timestamp_ns,
            values,
        });
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `amd-smi list --json` of a two-GPU MI300X node (ROCm 6.3).
    const LIST: &str = r#"[
        {"gpu": 0, "bdf": "0000:0c:00.0", "uuid": "5aff74a1-0000-1000-80b5-6d3c2e1e4a01", "kfd_id": 17763, "node_id": 2, "partition_id": 0},
        {"gpu": 1, "bdf": "0000:22:00.0", "uuid": "93ff74a1-0000-1000-8046-0f9b7c3d2e02", "kfd_id": 51396, "node_id": 3, "partition_id": 0}
    ]"#;

    /// `amd-smi static --asic --json`, shortened to the keys read.
    const STATIC: &str = r#"{"gpu_data": [
        {"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002", "device_id": "0x74a1"}},
        {"gpu": 1, "asic": {"market_name": "N/A", "vendor_id": "0x1002", "device_id": "0x74a1"}}
    ]}"#;

    /// `amd-smi metric --json --power --usage --temperature --energy --mem-usage --ecc`.
    const METRIC: &str = r#"[
        {
            "gpu": 0,
            "usage": {"gfx_activity": {"value": 97, "unit": "%"}, "umc_activity": {"value": 61, "unit": "%"},
                      "mm_activity": "N/A", "vcn_activity": ["N/A", "N/A"]},
            "power": {"socket_power": {"value": 742, "unit": "W"}, "gfx_voltage": "N/A", "soc_voltage": "N/A",
                      "mem_voltage": "N/A", "throttle_status": "THROTTLED", "power_management": "ENABLED"},
            "temperature": {"edge": "N/A", "hotspot": {"value": 78, "unit": "C"}, "mem": {"value": 64, "unit": "C"}},
            "energy": {"total_energy_consumption": {"value": 190123456.0, "unit": "J"}},
            "mem_usage": {"total_vram": {"value": 196592, "unit": "MB"}, "used_vram": {"value": 151234, "unit": "MB"},
                          "free_vram": {"value": 45358, "unit": "MB"}},
            "ecc": {"total_correctable_count": 0, "total_uncorrectable_count": 0, "total_deferred_count": 0,
                    "cache_correctable_count": 0, "cache_uncorrectable_count": 0}
        },
        {
            "gpu": 1,
            "usage": "N/A",
            "power": {"socket_power": {"value": 315.5, "unit": "W"}, "throttle_status": "UNTHROTTLED"},
            "temperature": {"edge": {"value": 48, "unit": "C"}, "hotspot": "N/A", "mem": "N/A"},
            "energy": "N/A",
            "mem_usage": {"used_vram": {"value": 149876, "unit": "MB"}},
            "ecc": {"total_uncorrectable_count": 2}
        },
        {"gpu": 7, "power": {"socket_power": {"value": 100, "unit": "W"}}}
    ]"#;

    fn gpus() -> BTreeMap<u32, AmdGpuIdentity> {
        let mut gpus = parse_list(LIST).unwrap();
        for (index, name) in parse_market_names(STATIC) {
            gpus.get_mut(&index).unwrap().name = name;
        }
        gpus
    }

    #[test]
    fn list_and_static_name_each_gpu() {
        let gpus = gpus();
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[&0].uuid, "5aff74a1-0000-1000-80b5-6d3c2e1e4a01");
        assert_eq!(gpus[&0].bdf.as_deref(), Some("0000:0c:00.0"));
        assert_eq!(gpus[&0].name, "AMD Instinct MI300X");
        assert_eq!(gpus[&1].name, "", "N/A is no name");
    }

    #[test]
    fn a_metric_answer_fills_the_amd_fields_in_their_units() {
        let samples = parse_metric(METRIC, &gpus(), "node", 42).unwrap();
        assert_eq!(samples.len(), 2, "GPU 7 was never listed");
        let (gpu0, gpu1) = (&samples[0], &samples[1]);
        assert_eq!(
            (gpu0.source.as_str(), gpu0.timestamp_ns, gpu0.device.as_deref()),
            (AMD_SMI_SOURCE, 42, Some("amd0"))
        );
        assert_eq!(gpu0.pci_bus_id.as_deref(), Some("0000:0c:00.0"));
        assert_eq!(gpu0.value(GpuField::AmdPower), Some(742.0));
        assert!((gpu0.value(GpuField::AmdEnergyConsumption).unwrap() - 190.123456).abs() < 1e-9);
        assert_eq!(gpu0.value(GpuField::AmdGfxActivity), Some(97.0));
        assert_eq!(gpu0.value(GpuField::AmdUmcActivity), Some(61.0));
        assert_eq!(gpu0.value(GpuField::AmdMmActivity), None);
        assert!((gpu0.value(GpuField::AmdMemoryUsed).unwrap() - 151_234.0 * MIB_BYTES / 1e9).abs() < 1e-9);
        assert_eq!(gpu0.value(GpuField::AmdTemperature), Some(78.0), "hotspot first");
        assert_eq!(gpu0.value(GpuField::AmdEccUncorrectable), Some(0.0));
        assert_eq!(gpu0.value(GpuField::AmdThrottleStatus), Some(1.0));

        assert_eq!(gpu1.value(GpuField::AmdPower), Some(315.5));
        assert_eq!(gpu1.value(GpuField::AmdEnergyConsumption), None);
        assert_eq!(gpu1.value(GpuField::AmdGfxActivity), None);
        assert_eq!(gpu1.value(GpuField::AmdTemperature), Some(48.0), "the edge when there is no hotspot");
        assert_eq!(gpu1.value(GpuField::AmdEccUncorrectable), Some(2.0));
        assert_eq!(gpu1.value(GpuField::AmdThrottleStatus), Some(0.0));
    }

    #[test]
    fn bad_answers_are_errors_and_unknown_units_are_left_out() {
        assert!(parse_metric("amd-smi: command not found", &gpus(), "", 0).is_err());
        assert!(parse_metric(r#"{"error": 1}"#, &gpus(), "", 0).is_err());
        let odd = r#"[{"gpu": 0, "power": {"socket_power": {"value": 742, "unit": "hp"}}}]"#;
        assert!(parse_metric(odd, &gpus(), "", 0).unwrap()[0].values.is_empty());
    }

    #[test]
    fn a_missing_program_is_found_missing_and_a_slow_one_is_stopped() {
        assert_eq!(on_path("amd-smi-surely-not-installed"), None);
        let sh = on_path("sh").expect("sh");
        assert_eq!(run(&sh, &["-c", "echo '[]'"]).unwrap().trim(), "[]");
        assert!(run(&sh, &["-c", "exit 3"]).is_err());
    }
}
