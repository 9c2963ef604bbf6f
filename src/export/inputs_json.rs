//! `inputs.json`: the request bodies prepared for a run, one session per dataset entry, in
//! AIPerf's shape: `{"data": [{"session_id": "session_000000", "payloads": [<body>]}]}`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// The file's name (AIPerf's; `export_prefix` does not rename it).
pub const FILE_NAME: &str = "inputs.json";

/// Write `bodies` (JSON request bodies, in dataset order) to `path`.
pub fn write<'a>(path: &Path, bodies: impl IntoIterator<Item = &'a [u8]>) -> Result<()> {
    let mut data = Vec::new();
    for (index, body) in bodies.into_iter().enumerate() {
        let payload: Value = serde_json::from_slice(body).context("a prepared request body is not JSON")?;
        data.push(json!({ "session_id": format!("session_{index:06}"), "payloads": [payload] }));
    }
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, &json!({ "data": data }))?;
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_body_is_one_session_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let bodies: [&[u8]; 2] = [br#"{"model":"m","max_tokens":3}"#, br#"{"model":"m","prompt":"hi"}"#];
        write(&path, bodies).unwrap();
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({"data": [
                {"session_id": "session_000000", "payloads": [{"model": "m", "max_tokens": 3}]},
                {"session_id": "session_000001", "payloads": [{"model": "m", "prompt": "hi"}]},
            ]})
        );
        assert!(write(&path, [&b"not json"[..]]).is_err());
    }
}
