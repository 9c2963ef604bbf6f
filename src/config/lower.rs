//! Lowering a normalized config document to the plans `aiperf profile` runs.

use std::path::Path;

use serde_json::Value;

use super::{ConfigError, ProfileJob};

/// Lower a normalized document to what `aiperf profile` runs; relative paths resolve against
/// `base_dir` (the config file's folder, or the working directory for flags).
pub fn lower(_document: &Value, _base_dir: &Path) -> Result<ProfileJob, ConfigError> {
    Err(ConfigError::new("config schema 2.0 documents are not lowered yet"))
}
