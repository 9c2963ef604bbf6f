//! The config file a `config` subcommand reads: an argument, or AIPerf's `--config-file`.

use std::path::{Path, PathBuf};

/// The config file: an argument, or AIPerf's `--config-file`.
#[derive(Debug, clap::Args)]
pub struct ConfigFileArg {
    /// The config file (.yaml)
    #[arg(required_unless_present = "config_file", value_name = "FILE")]
    file: Option<PathBuf>,
    /// AIPerf's `--config-file` spelling of FILE
    #[arg(long, hide = true, conflicts_with = "file")]
    config_file: Option<PathBuf>,
}

impl ConfigFileArg {
    pub fn path(&self) -> &Path {
        self.file.as_deref().or(self.config_file.as_deref()).unwrap_or(Path::new(""))
    }
}
