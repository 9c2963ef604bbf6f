//! `JsonLinesFile`: a JSON-lines file written one value at a time into a 64 KiB buffer,
//! flushed to the file when the buffer fills and whenever its writer says so (the record
//! sinks: each time the metrics thread catches up with its records), and synced at the end.
//! The kernel is asked to start writing it to disk every 32 MiB on the way, so that the final
//! sync has little left to wait for.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

/// Lines held before they go to the file: about 30 profile_export.jsonl lines a `write`.
const BUFFER_BYTES: usize = 64 * 1024;

/// Bytes written between two requests to start writing them to disk. The kernel's own
/// writeback starts only once a share of the memory is dirty (10 % by default, 2.3 GB on a
/// 23 GB machine), so without them a million records' 2 GB all waited for the final sync:
/// 2–3 s of the finish on a virtual disk (docs/performance.md).
const WRITEBACK_EVERY_BYTES: u64 = 32 << 20;

pub(super) struct JsonLinesFile {
    path: PathBuf,
    out: BufWriter<WrittenBack>,
}

/// The file, counting what reaches it and starting each `WRITEBACK_EVERY_BYTES` of it on its
/// way to the disk.
struct WrittenBack {
    file: File,
    written: u64,
    written_back: u64,
}

impl Write for WrittenBack {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.file.write(bytes)?;
        self.written += written as u64;
        if self.written - self.written_back >= WRITEBACK_EVERY_BYTES {
            start_writeback(&self.file, self.written_back, self.written - self.written_back);
            self.written_back = self.written;
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Ask the kernel to start writing `length` bytes of `file` from `offset` to disk, without
/// waiting for them. A failure only leaves more for the final sync.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, length: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range reads its arguments only; the descriptor is the open file's own.
    let status = unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            length as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        )
    };
    if status != 0 {
        tracing::debug!("cannot start writing back a jsonl file: {}", io::Error::last_os_error());
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _length: u64) {}

impl JsonLinesFile {
    /// Creates (or truncates) the file, and its folder if needed.
    pub fn create(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create folder {}", dir.display()))?;
        }
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let file = WrittenBack { file, written: 0, written_back: 0 };
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
        self.out.get_ref().file.sync_all().with_context(|| format!("cannot sync {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_32_mib_is_started_on_its_way_to_disk_and_the_file_stays_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        let mut file = JsonLinesFile::create(&path).unwrap();
        let one_mib = vec![b'x'; 1 << 20];
        let mut started = Vec::new();
        for _ in 0..70 {
            file.write_text(&one_mib).unwrap();
            let out = file.out.get_ref();
            if started.last() != Some(&out.written_back) {
                started.push(out.written_back);
            }
            assert!(out.written - out.written_back < WRITEBACK_EVERY_BYTES, "nothing is left behind");
        }
        // Whole lines of 1 MiB + 1 reach the file; the newline of each waits in the buffer.
        let written: Vec<u64> = started.iter().map(|bytes| bytes / (1 << 20)).collect();
        assert_eq!(written, [0, 32, 64], "writeback started at {started:?}");
        file.finish().unwrap();
        let text = std::fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = text.split(|byte| *byte == b'\n').collect();
        assert_eq!(lines.len(), 71, "70 lines, each ended");
        assert!(lines[..70].iter().all(|line| *line == one_mib.as_slice()) && lines[70].is_empty());
    }
}
