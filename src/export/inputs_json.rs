//! `inputs.json`: the request bodies prepared for a run, one session per dataset conversation
//! (a multi-turn file's session holds its turns), in AIPerf's shape:
//! `{"data": [{"session_id": "session_000000", "payloads": [<body>, ..]}]}`, each named as its
//! records' `conversation_id`; an upload's form body is written as `{"form_data_bytes": <size>}`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// The file's name (AIPerf's; `export_prefix` does not rename it).
pub const FILE_NAME: &str = "inputs.json";

/// How deep a session sits in the document (`{"data": [<here>]}`), in the pretty printer's
/// two-space steps.
const SESSION_INDENT: &str = "    ";

/// Write `sessions` (each its name and the JSON request bodies of its turns, in dataset order)
/// to `path`, pretty-printed as one document, one session in memory at a time (a dataset of
/// millions of entries would otherwise be a tree of millions of JSON values before a byte is
/// written).
pub fn write<'a, Turns>(path: &Path, sessions: impl IntoIterator<Item = (&'a str, Turns)>) -> Result<()>
where
    Turns: IntoIterator<Item = &'a [u8]>,
{
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write_document(&mut out, sessions)
        .and_then(|()| Ok(out.flush()?))
        .with_context(|| format!("cannot write {}", path.display()))
}

fn write_document<'a, Turns>(out: &mut impl Write, sessions: impl IntoIterator<Item = (&'a str, Turns)>) -> Result<()>
where
    Turns: IntoIterator<Item = &'a [u8]>,
{
    out.write_all(b"{\n  \"data\": [")?;
    let mut first = true;
    for (name, turns) in sessions {
        let payloads = turns.into_iter().map(payload_json).collect::<Vec<Value>>();
        let session = serde_json::to_string_pretty(&json!({ "session_id": name, "payloads": payloads }))?;
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        // A JSON string holds no raw line break, so every line of the session is indented.
        for (index, line) in session.lines().enumerate() {
            if index > 0 {
                out.write_all(b"\n")?;
            }
            out.write_all(SESSION_INDENT.as_bytes())?;
            out.write_all(line.as_bytes())?;
        }
    }
    out.write_all(if first { b"]\n}" } else { b"\n  ]\n}" })?;
    Ok(())
}

/// A JSON body as it is; an upload's form (not JSON, often binary) as its size.
fn payload_json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|_| json!({ "form_data_bytes": body.len() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_holds_its_turns_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let single: &[u8] = br#"{"model":"m","max_tokens":3}"#;
        let turns: [&[u8]; 2] = [br#"{"prompt":"hi"}"#, br#"{"prompt":"more"}"#];
        write(&path, [("session_000000", vec![single]), ("alpha", turns.to_vec())]).unwrap();
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({"data": [
                {"session_id": "session_000000", "payloads": [{"model": "m", "max_tokens": 3}]},
                {"session_id": "alpha", "payloads": [{"prompt": "hi"}, {"prompt": "more"}]},
            ]})
        );
        // Byte for byte the document pretty-printed whole, as before it was written a session at a time.
        let whole = serde_json::to_string_pretty(&written).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        write(&path, std::iter::empty::<(&str, Vec<&[u8]>)>()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            serde_json::to_string_pretty(&json!({"data": []})).unwrap()
        );
        write(&path, [("session_000000", [&b"--form\r\n\x00"[..]])]).unwrap();
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["data"][0]["payloads"][0], json!({"form_data_bytes": 9}));
    }
}
