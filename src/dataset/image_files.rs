//! Images named by dataset entries (`"image": ".."` or `"images": [..]`): http(s) and `data:`
//! URLs are sent as they are; a local path, relative to the dataset file, is read when the
//! dataset loads and sent as a base64 `data:` URL with the MIME type its extension names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::fields::Record;

/// The extensions a local image may have, and their MIME types.
const MIME_TYPES: [(&str, &str); 5] =
    [("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("webp", "image/webp"), ("gif", "image/gif")];

/// Turns the image references of one dataset file into URLs, reading each local file once.
pub struct ImageFiles {
    /// The dataset file's folder: relative paths start there.
    folder: PathBuf,
    /// Local files already read, by resolved path.
    read: HashMap<PathBuf, String>,
}

impl ImageFiles {
    /// For the images of the dataset file at `dataset`.
    pub fn beside(dataset: &Path) -> Self {
        let folder = dataset.parent().map(Path::to_path_buf).unwrap_or_default();
        Self { folder, read: HashMap::new() }
    }

    /// The URLs of `record`'s `image` (one) or `images` (a list); none when it has neither.
    pub fn of(&mut self, record: &Record<'_>) -> Result<Vec<String>> {
        let references = match (record.has("image"), record.has("images")) {
            (true, true) => bail!("{}: give either \"image\" or \"images\", not both", record.at),
            (true, false) => vec![record.string("image")?],
            (false, true) => record.strings("images")?,
            (false, false) => return Ok(Vec::new()),
        };
        references.into_iter().map(|reference| self.url(&record.at, reference)).collect()
    }

    /// One reference as the URL to send.
    pub(super) fn url(&mut self, at: &str, reference: &str) -> Result<String> {
        let reference = reference.trim();
        if reference.is_empty() {
            bail!("{at}: an image is an empty string");
        }
        let lower = reference.to_ascii_lowercase();
        if lower.starts_with("data:") || lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(reference.to_string());
        }
        let path = self.folder.join(reference);
        if let Some(url) = self.read.get(&path) {
            return Ok(url.clone());
        }
        let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or_default().to_ascii_lowercase();
        let Some((_, mime)) = MIME_TYPES.iter().find(|(known, _)| *known == extension) else {
            bail!(
                "{at}: image `{reference}` is not a .png, .jpg, .jpeg, .webp or .gif file (nor an http(s) or data: URL)"
            );
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => bail!("{at}: cannot read image {}: {e}", path.display()),
        };
        let url = format!("data:{mime};base64,{}", BASE64.encode(bytes));
        self.read.insert(path, url.clone());
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fields::json_lines;

    /// The image URLs of each line of `jsonl`, for a dataset file in `dir`.
    fn urls(dir: &Path, jsonl: &str) -> Result<Vec<Vec<String>>> {
        let dataset = dir.join("data.jsonl");
        let mut files = ImageFiles::beside(&dataset);
        json_lines(&dataset, jsonl)?.iter().map(|(at, object)| files.of(&Record::new(at, object))).collect()
    }

    #[test]
    fn local_files_become_data_urls_and_urls_pass_through() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pics")).unwrap();
        std::fs::write(dir.path().join("pics/a.PNG"), b"png bytes").unwrap();
        std::fs::write(dir.path().join("b.jpg"), b"\xff\xd8jpeg").unwrap();
        std::fs::write(dir.path().join("c.webp"), b"RIFF").unwrap();
        let lines = r#"{"text": "one", "image": "pics/a.PNG"}
{"text": "three", "images": ["b.jpg", "https://example.com/x.gif", "data:image/gif;base64,R0lG", "c.webp"]}
{"text": "none"}"#;
        let urls = urls(dir.path(), lines).unwrap();
        assert_eq!(urls[0], [format!("data:image/png;base64,{}", BASE64.encode(b"png bytes"))]);
        assert_eq!(
            urls[1],
            [
                format!("data:image/jpeg;base64,{}", BASE64.encode(b"\xff\xd8jpeg")),
                "https://example.com/x.gif".to_string(),
                "data:image/gif;base64,R0lG".to_string(),
                format!("data:image/webp;base64,{}", BASE64.encode(b"RIFF")),
            ]
        );
        assert!(urls[2].is_empty());
    }

    #[test]
    fn bad_references_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"text").unwrap();
        let error = |jsonl: &str| urls(dir.path(), jsonl).unwrap_err().to_string();
        let missing = error("{\"text\": \"a\"}\n{\"text\": \"b\", \"image\": \"gone.png\"}");
        assert!(missing.contains("data.jsonl:2: cannot read image"), "{missing}");
        assert!(missing.contains("gone.png"), "{missing}");
        assert!(error(r#"{"image": "notes.txt"}"#).contains(":1: image `notes.txt` is not a .png, .jpg"));
        assert!(error(r#"{"image": "a.png", "images": []}"#).contains(":1: give either \"image\" or \"images\""));
        assert!(error(r#"{"images": "a.png"}"#).contains(":1: \"images\" must be an array"));
        assert!(error(r#"{"images": [""]}"#).contains(":1: an image is an empty string"));
    }
}
