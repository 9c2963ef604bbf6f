//! Speech recognition datasets (LibriSpeech, VoxPopuli, GigaSpeech, AMI, SPGISpeech): each row's
//! audio clip with the prompt "Transcribe this audio."; clips over 30 s are skipped, as AIPerf
//! does. Clips are sent as WAV, FLAC, MP3 and Ogg Vorbis ones decoded first (AIPerf's
//! soundfile re-encoding); a dataset none of whose clips decode is named with the reason.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::media::{self, Audio};
use super::rows;
use crate::dataset::{DatasetEntry, tokenizer::Tokenizer};

const PROMPT: &str = "Transcribe this audio.";
/// Longer clips are left out (the ASR benchmarks' convention).
const MAX_SECONDS: f64 = 30.0;

pub fn read(
    files: &[PathBuf],
    audio_column: &str,
    limit: Option<usize>,
    tokenizer: &Tokenizer,
) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    let mut undecoded = None;
    rows::each(files, |row| {
        match row.cells.get(audio_column).map(media::audio) {
            Some(Audio::Clip(clip)) if clip.seconds <= MAX_SECONDS => {
                let mut entry = DatasetEntry::counted(tokenizer, PROMPT.to_string(), None);
                entry.audio = vec![clip];
                entries.push(entry);
            }
            Some(Audio::Undecoded(container, why)) => {
                undecoded.get_or_insert((row.at, container, why));
            }
            _ => {}
        }
        Ok(limit.is_none_or(|limit| entries.len() < limit))
    })?;
    if entries.is_empty()
        && let Some((at, container, why)) = undecoded
    {
        bail!("{at}: the `{audio_column}` clip ({container}) cannot be decoded: {why}");
    }
    Ok(entries)
}
