//! `JsonLinesFile`: a JSON-lines file written one value at a time into a 64 KiB buffer,
//! flushed to the file when the buffer fills and whenever its writer says so (the record
//! sinks: each time the metrics thread catches up with its records).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

/// Lines held before they go to the file: about 30 profile_export.jsonl lines a `write`.
const BUFFER_BYTES: usize = 64 * 1024;

pub(super) struct JsonLinesFile {
    path: PathBuf,
    out: BufWriter<File>,
}

impl JsonLinesFile {
    /// Creates (or truncates) the file, and its folder if needed.
    pub fn create(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create folder {}", dir.display()))?;
        }
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self { path: path.to_path_buf(), out: BufWriter::with_capacity(BUFFER_BYTES, file) })
    }

    /// Appends `line`.
    pub fn write(&mut self, line: &impl Serialize) -> Result<()> {
        let written = serde_json::to_writer(&mut self.out, line)
            .map_err(anyhow::Error::from)
            .and_then(|()| self.out.write_all(b"\n").map_err(anyhow::Error::from));
        written.with_context(|| format!("cannot write to {}", self.path.display()))
    }

    /// Appends `line`, JSON text written by the caller.
    pub fn write_text(&mut self, line: &[u8]) -> Result<()> {
        let written = self.out.write_all(line).and_then(|()| self.out.write_all(b"\n"));
        written.with_context(|| format!("cannot write to {}", self.path.display()))
    }

    /// Puts every line written so far in the file.
    pub fn flush(&mut self) -> Result<()> {
        self.out.flush().with_context(|| format!("cannot write to {}", self.path.display()))
    }

    /// Flushes and syncs the file.
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().with_context(|| format!("cannot write to {}", self.path.display()))?;
        self.out.get_ref().sync_all().with_context(|| format!("cannot sync {}", self.path.display()))
    }
}
