//! The GPU telemetry fields (AIPerf's names and units) and how DCGM exporter metrics map
//! onto them, with the scale that converts DCGM's unit into the field's.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuField {
    GpuPowerUsage,
    EnergyConsumption,
    GpuUtilization,
    MemoryCopyUtilization,
    GpuMemoryUsed,
    GpuMemoryTotal,
    GpuTemperature,
    SmClock,
    MemoryClock,
    XidErrors,
}

impl GpuField {
    pub const ALL: [GpuField; 10] = [
        GpuField::GpuPowerUsage,
        GpuField::EnergyConsumption,
        GpuField::GpuUtilization,
        GpuField::MemoryCopyUtilization,
        GpuField::GpuMemoryUsed,
        GpuField::GpuMemoryTotal,
        GpuField::GpuTemperature,
        GpuField::SmClock,
        GpuField::MemoryClock,
        GpuField::XidErrors,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GpuField::GpuPowerUsage => "gpu_power_usage",
            GpuField::EnergyConsumption => "energy_consumption",
            GpuField::GpuUtilization => "gpu_utilization",
            GpuField::MemoryCopyUtilization => "memory_copy_utilization",
            GpuField::GpuMemoryUsed => "gpu_memory_used",
            GpuField::GpuMemoryTotal => "gpu_memory_total",
            GpuField::GpuTemperature => "gpu_temperature",
            GpuField::SmClock => "sm_clock",
            GpuField::MemoryClock => "memory_clock",
            GpuField::XidErrors => "xid_errors",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            GpuField::GpuPowerUsage => "W",
            GpuField::EnergyConsumption => "MJ",
            GpuField::GpuUtilization | GpuField::MemoryCopyUtilization => "%",
            GpuField::GpuMemoryUsed | GpuField::GpuMemoryTotal => "GB",
            GpuField::GpuTemperature => "°C",
            GpuField::SmClock | GpuField::MemoryClock => "MHz",
            GpuField::XidErrors => "count",
        }
    }
}

/// Bytes in a MiB, for DCGM's framebuffer fields.
const MIB_BYTES: f64 = 1_048_576.0;

/// The field a DCGM metric fills and the factor from DCGM's unit to the field's unit.
pub fn from_dcgm(metric: &str) -> Option<(GpuField, f64)> {
    Some(match metric {
        "DCGM_FI_DEV_POWER_USAGE" => (GpuField::GpuPowerUsage, 1.0),
        // mJ → MJ
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" => (GpuField::EnergyConsumption, 1e-9),
        "DCGM_FI_DEV_GPU_UTIL" => (GpuField::GpuUtilization, 1.0),
        "DCGM_FI_DEV_MEM_COPY_UTIL" => (GpuField::MemoryCopyUtilization, 1.0),
        // MiB → GB
        "DCGM_FI_DEV_FB_USED" => (GpuField::GpuMemoryUsed, MIB_BYTES / 1e9),
        "DCGM_FI_DEV_FB_TOTAL" => (GpuField::GpuMemoryTotal, MIB_BYTES / 1e9),
        "DCGM_FI_DEV_GPU_TEMP" => (GpuField::GpuTemperature, 1.0),
        "DCGM_FI_DEV_SM_CLOCK" => (GpuField::SmClock, 1.0),
        "DCGM_FI_DEV_MEM_CLOCK" => (GpuField::MemoryClock, 1.0),
        "DCGM_FI_DEV_XID_ERRORS" => (GpuField::XidErrors, 1.0),
        _ => return None,
    })
}
