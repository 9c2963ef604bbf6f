//! The GPU telemetry fields under AIPerf 0.13's names, display names and units (our three
//! extras, memory total and the two clocks, follow theirs), each with its vendor (AIPerf's
//! `platform`), which of them are counters, and how DCGM exporter metrics map onto them with
//! the scale from DCGM's unit to the field's.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuField {
    PowerUsage,
    EnergyConsumption,
    GpuUtilization,
    MemoryUtilization,
    MemoryUsed,
    Temperature,
    SmUtilization,
    DecoderUtilization,
    EncoderUtilization,
    XidErrors,
    PowerViolation,
    MemoryTotal,
    SmClock,
    MemoryClock,
    AmdPower,
    AmdEnergyConsumption,
    AmdGfxActivity,
    AmdUmcActivity,
    AmdMmActivity,
    AmdMemoryUsed,
    AmdTemperature,
    AmdEccUncorrectable,
    AmdThrottleStatus,
}

/// Whose GPU a reading is of: AIPerf's `platform` of a GPU, and the prefix of its fields and
/// energy metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    Nvidia,
    Amd,
}

impl Vendor {
    pub const ALL: [Vendor; 2] = [Vendor::Nvidia, Vendor::Amd];

    /// AIPerf's `platform` value.
    pub fn platform(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
        }
    }

    /// As titles write it: `NVIDIA`, `AMD`.
    pub fn display(self) -> &'static str {
        match self {
            Vendor::Nvidia => "NVIDIA",
            Vendor::Amd => "AMD",
        }
    }

    /// The field of the GPUs' power draw (W).
    pub fn power_field(self) -> GpuField {
        match self {
            Vendor::Nvidia => GpuField::PowerUsage,
            Vendor::Amd => GpuField::AmdPower,
        }
    }

    /// The field of the GPUs' energy counter (MJ).
    pub fn energy_field(self) -> GpuField {
        match self {
            Vendor::Nvidia => GpuField::EnergyConsumption,
            Vendor::Amd => GpuField::AmdEnergyConsumption,
        }
    }
}

impl GpuField {
    /// AIPerf's order (its table and CSV rows), then ours, then AMD's in AIPerf's order.
    pub const ALL: [GpuField; 23] = [
        GpuField::PowerUsage,
        GpuField::EnergyConsumption,
        GpuField::GpuUtilization,
        GpuField::MemoryUtilization,
        GpuField::MemoryUsed,
        GpuField::Temperature,
        GpuField::SmUtilization,
        GpuField::DecoderUtilization,
        GpuField::EncoderUtilization,
        GpuField::XidErrors,
        GpuField::PowerViolation,
        GpuField::MemoryTotal,
        GpuField::SmClock,
        GpuField::MemoryClock,
        GpuField::AmdPower,
        GpuField::AmdEnergyConsumption,
        GpuField::AmdGfxActivity,
        GpuField::AmdUmcActivity,
        GpuField::AmdMmActivity,
        GpuField::AmdMemoryUsed,
        GpuField::AmdTemperature,
        GpuField::AmdEccUncorrectable,
        GpuField::AmdThrottleStatus,
    ];

    /// The vendor whose GPUs report this field.
    pub fn vendor(self) -> Vendor {
        if self.name().starts_with("amd_") { Vendor::Amd } else { Vendor::Nvidia }
    }

    pub fn name(self) -> &'static str {
        match self {
            GpuField::PowerUsage => "nvidia_power_usage",
            GpuField::EnergyConsumption => "nvidia_energy_consumption",
            GpuField::GpuUtilization => "nvidia_gpu_utilization",
            GpuField::MemoryUtilization => "nvidia_memory_utilization",
            GpuField::MemoryUsed => "nvidia_memory_used",
            GpuField::Temperature => "nvidia_temperature",
            GpuField::SmUtilization => "nvidia_sm_utilization",
            GpuField::DecoderUtilization => "nvidia_decoder_utilization",
            GpuField::EncoderUtilization => "nvidia_encoder_utilization",
            GpuField::XidErrors => "nvidia_xid_errors",
            GpuField::PowerViolation => "nvidia_power_violation",
            GpuField::MemoryTotal => "nvidia_memory_total",
            GpuField::SmClock => "nvidia_sm_clock",
            GpuField::MemoryClock => "nvidia_memory_clock",
            GpuField::AmdPower => "amd_power",
            GpuField::AmdEnergyConsumption => "amd_energy_consumption",
            GpuField::AmdGfxActivity => "amd_gfx_activity",
            GpuField::AmdUmcActivity => "amd_umc_activity",
            GpuField::AmdMmActivity => "amd_mm_activity",
            GpuField::AmdMemoryUsed => "amd_memory_used",
            GpuField::AmdTemperature => "amd_temperature",
            GpuField::AmdEccUncorrectable => "amd_ecc_uncorrectable",
            GpuField::AmdThrottleStatus => "amd_throttle_status",
        }
    }

    /// The name tables and the CSV show.
    pub fn display(self) -> &'static str {
        match self {
            GpuField::PowerUsage => "NVIDIA GPU Power Usage",
            GpuField::EnergyConsumption => "NVIDIA Energy Consumption",
            GpuField::GpuUtilization => "NVIDIA GPU Utilization",
            GpuField::MemoryUtilization => "NVIDIA Memory Utilization",
            GpuField::MemoryUsed => "NVIDIA GPU Memory Used",
            GpuField::Temperature => "NVIDIA GPU Temperature",
            GpuField::SmUtilization => "NVIDIA SM Utilization",
            GpuField::DecoderUtilization => "NVIDIA Decoder Utilization",
            GpuField::EncoderUtilization => "NVIDIA Encoder Utilization",
            GpuField::XidErrors => "NVIDIA XID Errors",
            GpuField::PowerViolation => "NVIDIA Power Violation",
            GpuField::MemoryTotal => "NVIDIA GPU Memory Total",
            GpuField::SmClock => "NVIDIA SM Clock",
            GpuField::MemoryClock => "NVIDIA Memory Clock",
            GpuField::AmdPower => "AMD GPU Power",
            GpuField::AmdEnergyConsumption => "AMD Energy Consumption",
            GpuField::AmdGfxActivity => "AMD GFX Activity",
            GpuField::AmdUmcActivity => "AMD UMC Activity",
            GpuField::AmdMmActivity => "AMD MM Activity",
            GpuField::AmdMemoryUsed => "AMD GPU Memory Used",
            GpuField::AmdTemperature => "AMD GPU Temperature",
            GpuField::AmdEccUncorrectable => "AMD ECC Uncorrectable",
            GpuField::AmdThrottleStatus => "AMD Throttle Status",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            GpuField::PowerUsage | GpuField::AmdPower => "W",
            GpuField::EnergyConsumption | GpuField::AmdEnergyConsumption => "MJ",
            GpuField::GpuUtilization
            | GpuField::MemoryUtilization
            | GpuField::SmUtilization
            | GpuField::DecoderUtilization
            | GpuField::EncoderUtilization
            | GpuField::AmdGfxActivity
            | GpuField::AmdUmcActivity
            | GpuField::AmdMmActivity => "%",
            GpuField::MemoryUsed | GpuField::MemoryTotal | GpuField::AmdMemoryUsed => "GB",
            GpuField::Temperature | GpuField::AmdTemperature => "°C",
            GpuField::XidErrors | GpuField::AmdEccUncorrectable | GpuField::AmdThrottleStatus => "count",
            GpuField::PowerViolation => "us",
            GpuField::SmClock | GpuField::MemoryClock => "MHz",
        }
    }

    /// A running total: the window reports how much it grew, not a distribution.
    pub fn is_counter(self) -> bool {
        matches!(
            self,
            GpuField::EnergyConsumption
                | GpuField::XidErrors
                | GpuField::PowerViolation
                | GpuField::AmdEnergyConsumption
                | GpuField::AmdEccUncorrectable
        )
    }

    pub fn from_name(name: &str) -> Option<GpuField> {
        GpuField::ALL.into_iter().find(|field| field.name() == name)
    }
}

/// How tables show a field named `name`: `NVIDIA GPU Power Usage (W)`; a name we do not know
/// as it is.
pub fn row_label(name: &str) -> String {
    match GpuField::from_name(name) {
        Some(field) => format!("{} ({})", field.display(), field.unit()),
        None => name.to_string(),
    }
}

/// Bytes in a MiB, for DCGM's framebuffer fields and AMD's VRAM "MB" (amd-smi divides bytes
/// by 1024²).
pub const MIB_BYTES: f64 = 1_048_576.0;

/// The field a DCGM metric fills and the factor from DCGM's unit to the field's unit.
pub fn from_dcgm(metric: &str) -> Option<(GpuField, f64)> {
    Some(match metric {
        "DCGM_FI_DEV_POWER_USAGE" => (GpuField::PowerUsage, 1.0),
        // mJ → MJ
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" => (GpuField::EnergyConsumption, 1e-9),
        "DCGM_FI_DEV_GPU_UTIL" => (GpuField::GpuUtilization, 1.0),
        "DCGM_FI_DEV_MEM_COPY_UTIL" => (GpuField::MemoryUtilization, 1.0),
        // MiB → GB
        "DCGM_FI_DEV_FB_USED" => (GpuField::MemoryUsed, MIB_BYTES / 1e9),
        "DCGM_FI_DEV_FB_TOTAL" => (GpuField::MemoryTotal, MIB_BYTES / 1e9),
        "DCGM_FI_DEV_GPU_TEMP" => (GpuField::Temperature, 1.0),
        "DCGM_FI_PROF_SM_ACTIVE" => (GpuField::SmUtilization, 1.0),
        "DCGM_FI_DEV_DEC_UTIL" => (GpuField::DecoderUtilization, 1.0),
        "DCGM_FI_DEV_ENC_UTIL" => (GpuField::EncoderUtilization, 1.0),
        "DCGM_FI_DEV_XID_ERRORS" => (GpuField::XidErrors, 1.0),
        // ns → µs, as AIPerf scales it
        "DCGM_FI_DEV_POWER_VIOLATION" => (GpuField::PowerViolation, 1e-3),
        "DCGM_FI_DEV_SM_CLOCK" => (GpuField::SmClock, 1.0),
        "DCGM_FI_DEV_MEM_CLOCK" => (GpuField::MemoryClock, 1.0),
        _ => return None,
    })
}
