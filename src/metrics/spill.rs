//! `Spill`: where a run's kept metric values go once a column outgrows memory — one unnamed
//! file in the artifact directory (`O_TMPFILE` on Linux: no name, so neither the end of the
//! run nor a crash leaves anything behind), shared by every column that spills.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Values a column keeps in memory before it writes them out as one sorted run (4 MiB of
/// `u32`s): a run's memory bound per column, and few enough runs that reading them back is quick.
pub const RUN_VALUES: usize = 1 << 20;

/// The shared spill file and how long a column's in-memory run may grow.
#[derive(Debug, Clone)]
pub struct Spill {
    file: Arc<SpillFile>,
    /// Values a column keeps in memory before writing a sorted run.
    pub run_values: usize,
}

#[derive(Debug)]
struct SpillFile {
    file: File,
    dir: PathBuf,
    /// Bytes handed out so far: each run's place, reserved before it is written.
    reserved_bytes: AtomicU64,
}

impl Spill {
    /// A spill file in `dir` (created when missing), runs of `run_values` values.
    pub fn in_dir(dir: &Path, run_values: usize) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let file = unnamed_file(dir)?;
        let file = SpillFile { file, dir: dir.to_path_buf(), reserved_bytes: AtomicU64::new(0) };
        Ok(Self { file: Arc::new(file), run_values: run_values.max(1) })
    }

    /// Writes `bytes` at a fresh place in the file and gives that place.
    pub fn append(&self, bytes: &[u8]) -> io::Result<u64> {
        let offset = self.file.reserved_bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.file.file.write_all_at(bytes, offset)?;
        Ok(offset)
    }

    /// Fills `bytes` from `offset`.
    pub fn read_at(&self, bytes: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.file.read_exact_at(bytes, offset)
    }

    /// The directory the file lies in (for messages).
    pub fn dir(&self) -> &Path {
        &self.file.dir
    }

    /// Bytes written so far.
    pub fn written_bytes(&self) -> u64 {
        self.file.reserved_bytes.load(Ordering::Relaxed)
    }
}

/// A read-write file in `dir` that has no name: `O_TMPFILE` where the kernel and file system
/// offer it, else a named file removed at once.
fn unnamed_file(dir: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let unnamed =
            std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_TMPFILE).mode(0o600).open(dir);
        if let Ok(file) = unnamed {
            return Ok(file);
        }
    }
    let path = dir.join(format!(".aiperf-spill-{}-{:x}", std::process::id(), rand_suffix()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// A suffix that keeps two spill files of one process apart.
fn rand_suffix() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spill_file_has_no_name_and_keeps_what_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::in_dir(dir.path(), 8).unwrap();
        let (first, second) = (spill.append(b"abc").unwrap(), spill.append(b"defg").unwrap());
        assert_eq!((first, second, spill.written_bytes()), (0, 3, 7));
        let mut read = [0u8; 4];
        spill.read_at(&mut read, second).unwrap();
        assert_eq!(&read, b"defg");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing named in the directory");
    }
}
