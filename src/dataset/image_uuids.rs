//! vLLM's multimodal cache ids of dataset images (AIPerf's `image_uuids`): read beside a line's
//! `images`, sent as each chat `image_url` part's `uuid`, and, with `uuid_and_strip`, an image
//! whose id a session already sent with its bytes is sent again as its id alone.

use std::collections::HashSet;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::DatasetEntry;
use super::fields::Record;
use super::image_files::ImageFiles;
use crate::plan::{Dataset, FileFormat};

/// A line's image URLs and their cache ids (none, or one per image). `image_uuids` without
/// `images` are references to images the server already holds: each image is then an empty URL.
pub fn images_and_uuids(record: &Record<'_>, files: &mut ImageFiles) -> Result<(Vec<String>, Vec<String>)> {
    if !record.has("image_uuids") {
        return Ok((files.of(record)?, Vec::new()));
    }
    if record.has("image") {
        bail!("{}: \"image_uuids\" goes with \"images\" (a list), not with the singular \"image\"", record.at);
    }
    let uuids: Vec<String> = record.strings("image_uuids")?.into_iter().map(str::to_string).collect();
    if uuids.iter().any(String::is_empty) {
        bail!("{}: \"image_uuids\" has an empty string; each id must name its image", record.at);
    }
    if !record.has("images") {
        return Ok((vec![String::new(); uuids.len()], uuids));
    }
    let references = record.strings("images")?;
    if references.len() != uuids.len() {
        bail!(
            "{}: \"image_uuids\" has {} ids for {} images; give one id per image",
            record.at,
            uuids.len(),
            references.len()
        );
    }
    let urls = references
        .into_iter()
        .map(|reference| if reference.is_empty() { Ok(String::new()) } else { files.url(&record.at, reference) })
        .collect::<Result<_>>()?;
    Ok((urls, uuids))
}

/// Refuses `uuid_and_strip` on a dataset whose sessions it cannot strip: AIPerf strips the
/// sessions of single-turn files (rows grouped by `session_id`) and refuses multi-turn files.
pub fn check_strippable(dataset: &Dataset) -> Result<()> {
    if let Dataset::File(spec) = dataset
        && spec.format == FileFormat::MultiTurn
    {
        bail!(
            "uuid_and_strip (--uuid-and-strip) is not taken with a multi_turn file (AIPerf 0.13 refuses it too): \
             write the sessions as single_turn rows grouped by \"session_id\""
        );
    }
    Ok(())
}

/// In each session (a turn of index 0 and the turns after it), an image whose id an earlier turn
/// sent with its bytes goes as its id alone (an empty URL). Repeats within one turn keep their
/// bytes: the server fills its cache only after the request.
pub fn strip_repeated(entries: &mut [DatasetEntry]) {
    for session in entries.chunk_by_mut(|_, next| next.turn.is_some_and(|turn| turn.index > 0)) {
        let mut sent: HashSet<String> = HashSet::new();
        for entry in session {
            let mut sent_now = Vec::new();
            for (url, uuid) in entry.images.iter_mut().zip(&entry.image_uuids) {
                if sent.contains(uuid) {
                    url.clear();
                } else if !url.is_empty() {
                    sent_now.push(uuid.clone());
                }
            }
            sent.extend(sent_now);
        }
    }
}

/// The chat `body` with `uuids` set, in order, on the `image_url` parts of its last message.
pub fn with_uuids(body: &[u8], uuids: &[String]) -> Result<Vec<u8>> {
    let mut body: Value = serde_json::from_slice(body).context("a chat body")?;
    let parts = body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|messages| messages.last_mut())
        .and_then(|message| message.get_mut("content"))
        .and_then(Value::as_array_mut);
    let Some(parts) = parts else {
        bail!("image ids need a chat body whose last message has content parts");
    };
    let image_parts = parts.iter_mut().filter(|part| part["type"] == "image_url");
    for (part, uuid) in image_parts.zip(uuids) {
        part["uuid"] = Value::String(uuid.clone());
    }
    Ok(serde_json::to_vec(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::FileTurn;
    use crate::dataset::fields::json_lines;
    use crate::dataset::tokenizer::Tokenizer;

    fn read(dir: &std::path::Path, line: &str) -> Result<(Vec<String>, Vec<String>)> {
        let path = dir.join("rows.jsonl");
        let mut files = ImageFiles::beside(&path);
        let (at, object) = json_lines(&path, line)?.remove(0);
        images_and_uuids(&Record::new(&at, &object), &mut files)
    }

    #[test]
    fn ids_pair_with_images_and_alone_are_references() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), b"png").unwrap();
        let (urls, uuids) =
            read(dir.path(), r#"{"text": "t", "images": ["a.png", ""], "image_uuids": ["u1", "u2"]}"#).unwrap();
        assert_eq!(
            (urls, uuids),
            (vec!["data:image/png;base64,cG5n".into(), String::new()], vec!["u1".into(), "u2".into()])
        );
        let (urls, uuids) = read(dir.path(), r#"{"text": "t", "image_uuids": ["u1"]}"#).unwrap();
        assert_eq!((urls, uuids), (vec![String::new()], vec!["u1".into()]));
        let (urls, uuids) = read(dir.path(), r#"{"text": "t", "image": "a.png"}"#).unwrap();
        assert_eq!((urls.len(), uuids.len()), (1, 0));

        let error = |line: &str| read(dir.path(), line).unwrap_err().to_string();
        assert!(
            error(r#"{"images": ["a.png"], "image_uuids": ["u1", "u2"]}"#)
                .ends_with("rows.jsonl:1: \"image_uuids\" has 2 ids for 1 images; give one id per image")
        );
        assert!(error(r#"{"image": "a.png", "image_uuids": ["u1"]}"#).contains("not with the singular \"image\""));
        assert!(error(r#"{"image_uuids": [""]}"#).contains("has an empty string"));
    }

    #[test]
    fn a_session_sends_each_image_s_bytes_once() {
        let tokenizer = Tokenizer::shared_builtin();
        let turn = |index: u32, images: &[&str], uuids: &[&str]| {
            let mut entry = DatasetEntry::counted(&tokenizer, "t".into(), None);
            entry.turn = Some(FileTurn { index, delay_ms: None, timestamp_ms: None });
            entry.images = images.iter().map(|url| url.to_string()).collect();
            entry.image_uuids = uuids.iter().map(|uuid| uuid.to_string()).collect();
            entry
        };
        let mut entries = vec![
            turn(0, &["A", "A"], &["a", "a"]),
            turn(1, &["A", "B"], &["a", "b"]),
            turn(2, &["", "B", "C"], &["c", "b", "c"]),
            turn(0, &["A"], &["a"]),
        ];
        strip_repeated(&mut entries);
        let images: Vec<Vec<&str>> =
            entries.iter().map(|entry| entry.images.iter().map(String::as_str).collect()).collect();
        assert_eq!(images, [vec!["A", "A"], vec!["", "B"], vec!["", "", "C"], vec!["A"]]);
    }

    #[test]
    fn ids_go_on_the_image_parts_in_order() {
        let body = br#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "t"},
            {"type": "image_url", "image_url": {"url": ""}}, {"type": "image_url", "image_url": {"url": "x"}}]}]}"#;
        let body: Value = serde_json::from_slice(&with_uuids(body, &["u1".into(), "u2".into()]).unwrap()).unwrap();
        let parts = &body["messages"][0]["content"];
        assert_eq!((&parts[1]["uuid"], &parts[2]["uuid"], parts[0].get("uuid")), (&"u1".into(), &"u2".into(), None));
    }
}
