//! A generated dataset's files: `dataset.jsonl` (a mooncake trace whose lines of one
//! `session_id` are a conversation's turns: a first line of the whole first context with its
//! `timestamp`, `group_id` and `is_restart`, then each turn's new tokens, its fresh hash ids
//! and its `delay`), `manifest.json` (seed, session count, config name and the whole config,
//! which `--config` reads back) and `quality.json`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use super::config::GeneratorConfig;
use super::quality;
use super::sessions::Session;

/// Where each file went.
pub struct Written {
    pub dataset: PathBuf,
    pub manifest: PathBuf,
    pub quality: PathBuf,
    pub rows: usize,
}

pub fn write(dir: &Path, sessions: &[Session], config: &GeneratorConfig, seed: u64, name: &str) -> Result<Written> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let dataset = dir.join("dataset.jsonl");
    let rows = write_rows(&dataset, sessions, config.block_size)?;
    let manifest = dir.join("manifest.json");
    let manifest_json = json!({
        "seed": seed,
        "num_sessions": sessions.len(),
        "config_name": name,
        "generation_params": config,
    });
    write_json(&manifest, &manifest_json)?;
    let quality = dir.join("quality.json");
    write_json(&quality, &serde_json::to_value(quality::report(sessions, config))?)?;
    Ok(Written { dataset, manifest, quality, rows })
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(value)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The rows, a line each: a later turn's hash ids are fresh ids for its new tokens only (one
/// per block), numbered on from the largest id written so far.
fn write_rows(path: &Path, sessions: &[Session], block_size: u64) -> Result<usize> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut next_id = 0;
    let mut rows = 0;
    for session in sessions {
        for (index, turn) in session.turns.iter().enumerate() {
            let row = if index == 0 {
                next_id = next_id.max(turn.hash_ids.iter().max().map_or(0, |max| max + 1));
                let mut row = json!({
                    "session_id": session.id,
                    "input_length": turn.new_tokens,
                    "output_length": turn.output_length,
                    "hash_ids": turn.hash_ids,
                    "timestamp": round1(turn.timestamp_ms),
                    "group_id": session.group,
                });
                if session.restarted {
                    row["is_restart"] = json!(true);
                }
                row
            } else {
                let blocks = turn.new_tokens.div_ceil(block_size);
                let ids: Vec<u64> = (next_id..next_id + blocks).collect();
                next_id += blocks;
                json!({
                    "session_id": session.id,
                    "input_length": turn.new_tokens,
                    "output_length": turn.output_length,
                    "hash_ids": ids,
                    "delay": round1(turn.delay_ms),
                })
            };
            serde_json::to_writer(&mut out, &row)?;
            out.write_all(b"\n")?;
            rows += 1;
        }
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(rows)
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
