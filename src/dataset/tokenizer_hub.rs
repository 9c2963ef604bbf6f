//! Tokenizers named by Hugging Face model id (`tokenizer: "gpt2"`): found in aiperf's cache or
//! an existing HF hub cache, else downloaded once from the hub into aiperf's cache, with the
//! `tokenizer_config.json` and `chat_template.jinja` beside it where the hub has them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http::{StatusCode, Uri};
use http_body_util::{BodyExt, Empty};

use super::tiktoken_encodings;
use crate::plan::{TlsSettings, TokenizerSpec};
use crate::server_metrics::fetch::{ScrapeClient, scrape_client};

/// The hub used when `HF_ENDPOINT` is not set.
const DEFAULT_HF_ENDPOINT: &str = "https://huggingface.co";
/// Redirects followed before giving up (the hub answers with one or two).
const MAX_REDIRECTS: usize = 5;
/// Longest a download may take, connection included.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);
const TOKENIZER_FILE: &str = "tokenizer.json";
/// The files beside a tokenizer.json that say more of it (its special tokens, its chat template),
/// fetched with it where the hub has them.
const COMPANION_FILES: [&str; 2] = ["tokenizer_config.json", "chat_template.jinja"];

/// What a `tokenizer:` value means: "builtin", a tiktoken encoding (`o200k_base`), an existing
/// file or folder, a hub model id (`gpt2`, `org/name`), or else a path (whose absence the loader
/// reports).
pub fn spec_of(value: &str) -> TokenizerSpec {
    if value == "builtin" {
        TokenizerSpec::Builtin
    } else if tiktoken_encodings::is_encoding(value) {
        TokenizerSpec::Encoding { name: value.to_string() }
    } else if !Path::new(value).exists() && is_hub_model_id(value) {
        TokenizerSpec::Hub { id: value.to_string(), revision: None }
    } else {
        TokenizerSpec::File { path: value.to_string() }
    }
}

/// `name` or `org/name`, each part made of letters, digits, `-`, `_` and `.`, not a dot-name.
fn is_hub_model_id(value: &str) -> bool {
    let parts: Vec<&str> = value.split('/').collect();
    let valid_part = |part: &&str| {
        !part.is_empty()
            && part.len() <= 96
            && !part.starts_with('.')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    parts.len() <= 2 && parts.iter().all(valid_part) && !value.ends_with(".json")
}

/// Where tokenizers are looked for and fetched from.
#[derive(Debug, Clone)]
pub struct HubSettings {
    /// aiperf's cache root; tokenizers live in `<root>/tokenizers/<model id>/tokenizer.json`.
    pub cache_root: PathBuf,
    /// An HF hub cache (`models--org--name/snapshots/*/tokenizer.json`) to reuse, if any.
    pub hf_hub_cache: Option<PathBuf>,
    /// The hub's base URL.
    pub endpoint: String,
    /// Bearer token for gated or private models.
    pub token: Option<String>,
    /// Never download (`HF_HUB_OFFLINE`): only the caches count.
    pub offline: bool,
}

impl HubSettings {
    /// From `AIPERF_CACHE` (default `~/.cache/aiperf`), `HF_HUB_CACHE` / `HF_HOME`
    /// (default `~/.cache/huggingface/hub`), `HF_ENDPOINT`, `HF_TOKEN` and `HF_HUB_OFFLINE`.
    pub fn from_env() -> Result<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let home = var("HOME").map(PathBuf::from);
        let cache_root = match (var("AIPERF_CACHE"), &home) {
            (Some(root), _) => PathBuf::from(root),
            (None, Some(home)) => home.join(".cache").join("aiperf"),
            (None, None) => bail!("cannot place the tokenizer cache: set AIPERF_CACHE (or HOME)"),
        };
        let hf_hub_cache = var("HF_HUB_CACHE")
            .map(PathBuf::from)
            .or_else(|| var("HF_HOME").map(|hf_home| Path::new(&hf_home).join("hub")))
            .or_else(|| home.map(|home| home.join(".cache").join("huggingface").join("hub")));
        Ok(Self {
            cache_root,
            hf_hub_cache,
            endpoint: var("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_HF_ENDPOINT.to_string()),
            token: var("HF_TOKEN").or_else(|| var("HUGGING_FACE_HUB_TOKEN")),
            offline: var("HF_HUB_OFFLINE")
                .is_some_and(|v| ["1", "true", "yes", "on"].contains(&v.to_lowercase().as_str())),
        })
    }

    /// Where aiperf keeps the tokenizer of `model_id` (at `revision`, in a folder of its own).
    pub fn cached_path(&self, model_id: &str, revision: Option<&str>) -> PathBuf {
        let folder = self.cache_root.join("tokenizers").join(model_id);
        match revision {
            None => folder.join(TOKENIZER_FILE),
            // A branch may hold `/` (`refs/pr/1`): kept out of the path.
            Some(revision) => folder.join(format!("@{}", revision.replace('/', "--"))).join(TOKENIZER_FILE),
        }
    }

    fn download_url(&self, model_id: &str, revision: Option<&str>, file: &str) -> String {
        // The hub takes a revision with `/` escaped, as one path segment.
        let revision = revision.map_or_else(|| "main".to_string(), |revision| revision.replace('/', "%2F"));
        format!("{}/{model_id}/resolve/{revision}/{file}", self.endpoint.trim_end_matches('/'))
    }
}

/// The local `tokenizer.json` of `model_id` (at hub `revision`, else `main`): from aiperf's
/// cache, an HF hub cache, or downloaded into aiperf's cache. Blocks (call it off the async
/// runtime).
pub fn resolve(model_id: &str, revision: Option<&str>, settings: &HubSettings) -> Result<PathBuf> {
    let cached = settings.cached_path(model_id, revision);
    if cached.is_file() {
        return Ok(cached);
    }
    let snapshot = |hub: &Path| match revision {
        None => hf_hub_snapshot(hub, model_id),
        Some(revision) => hf_hub_revision(hub, model_id, revision),
    };
    if let Some(found) = settings.hf_hub_cache.as_deref().and_then(snapshot) {
        return Ok(found);
    }
    let url = settings.download_url(model_id, revision, TOKENIZER_FILE);
    let fetched = if settings.offline {
        Err(anyhow!("HF_HUB_OFFLINE is set, so nothing is downloaded"))
    } else {
        tracing::info!("downloading tokenizer \"{model_id}\" from {url}");
        download_into_cache(&url, settings.token.as_deref(), &cached)
            .inspect(|()| download_companions(model_id, revision, settings, &cached))
    };
    fetched.map_err(|cause| {
        let at = revision.map_or_else(String::new, |revision| format!(" at revision `{revision}`"));
        anyhow!(
            "tokenizer \"{model_id}\"{at} is not cached and could not be downloaded from {url}: {cause:#}.\n\
             To fix it, do one of:\n  \
             - download that tokenizer.json and pass its path: tokenizer: \"/path/to/tokenizer.json\"\n  \
             - place it at {}\n  \
             - use one built into aiperf: tokenizer: \"builtin\" (GPT-2's BPE) or \"o200k_base\"\n\
             (a gated model needs HF_TOKEN; another hub or mirror is set with HF_ENDPOINT)",
            cached.display()
        )
    })?;
    Ok(cached)
}

/// The HF hub cache's folder of `model_id`.
fn hf_model_dir(hub_cache: &Path, model_id: &str) -> PathBuf {
    hub_cache.join(format!("models--{}", model_id.replace('/', "--")))
}

/// `tokenizer.json` of the snapshot `refs/main` points at, else of any snapshot that has one.
fn hf_hub_snapshot(hub_cache: &Path, model_id: &str) -> Option<PathBuf> {
    let model_dir = hf_model_dir(hub_cache, model_id);
    let snapshots = model_dir.join("snapshots");
    let main_revision = std::fs::read_to_string(model_dir.join("refs").join("main")).ok();
    if let Some(file) = main_revision.map(|rev| snapshots.join(rev.trim()).join(TOKENIZER_FILE)).filter(|f| f.is_file())
    {
        return Some(file);
    }
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&snapshots)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path().join(TOKENIZER_FILE)))
        .filter(|file| file.is_file())
        .collect();
    candidates.sort();
    candidates.into_iter().next()
}

/// `tokenizer.json` at `revision` exactly: the snapshot its ref (a branch or tag) points at, or
/// the snapshot it names (a commit); no other snapshot stands in for it.
fn hf_hub_revision(hub_cache: &Path, model_id: &str, revision: &str) -> Option<PathBuf> {
    let model_dir = hf_model_dir(hub_cache, model_id);
    let commit = std::fs::read_to_string(model_dir.join("refs").join(revision)).ok();
    let commit = commit.as_deref().map_or(revision, str::trim);
    Some(model_dir.join("snapshots").join(commit).join(TOKENIZER_FILE)).filter(|file| file.is_file())
}

/// Fetch `url`, check that it is a tokenizer, and move it into place at `destination` in one step.
fn download_into_cache(url: &str, token: Option<&str>, destination: &Path) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting a runtime")?;
    let body = fetch(&runtime, url, token)?;
    tokenizers::Tokenizer::from_bytes(&body)
        .map_err(|e| anyhow!("the server sent something that is not a tokenizer.json: {e}"))?;
    let folder = destination.parent().context("the cache path has no folder")?;
    std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    write_in_one_step(destination, &body)
}

/// The companion files of `model_id`'s tokenizer, each into the folder of `tokenizer_file` where
/// the hub has it (most models have a `tokenizer_config.json`; few a `chat_template.jinja`); one
/// that cannot be had is left out.
fn download_companions(model_id: &str, revision: Option<&str>, settings: &HubSettings, tokenizer_file: &Path) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    for file in COMPANION_FILES {
        let url = settings.download_url(model_id, revision, file);
        let written = fetch(&runtime, &url, settings.token.as_deref())
            .and_then(|body| write_in_one_step(&tokenizer_file.with_file_name(file), &body));
        if let Err(why) = written {
            tracing::debug!("{url}: not fetched ({why:#})");
        }
    }
}

/// `download(url)` on `runtime`, within `DOWNLOAD_TIMEOUT`.
fn fetch(runtime: &tokio::runtime::Runtime, url: &str, token: Option<&str>) -> Result<Bytes> {
    // The timer is made inside the runtime, which it needs.
    runtime.block_on(async {
        tokio::time::timeout(DOWNLOAD_TIMEOUT, download(url, token))
            .await
            .map_err(|_| anyhow!("no complete answer within {DOWNLOAD_TIMEOUT:?}"))?
    })
}

/// `body` written beside `destination` and moved into place, so no reader sees part of it.
fn write_in_one_step(destination: &Path, body: &[u8]) -> Result<()> {
    let name = destination.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let partial = destination.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    std::fs::write(&partial, body).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, destination).or_else(|error| {
        // Best effort: the failure to report is the rename's.
        let _ = std::fs::remove_file(&partial);
        Err(error).with_context(|| format!("cannot move the download to {}", destination.display()))
    })
}

/// GET `url`, following redirects; the token goes only to the hub's own host.
async fn download(url: &str, token: Option<&str>) -> Result<Bytes> {
    let client = scrape_client(&TlsSettings::default())?;
    let hub: Uri = url.parse().with_context(|| format!("`{url}` is not a valid URL"))?;
    let mut current = hub.clone();
    for _ in 0..=MAX_REDIRECTS {
        let authorization = token.filter(|_| current.authority() == hub.authority());
        let response = get(&client, &current, authorization).await?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .context(format!("HTTP {status} without a Location"))?;
            current = redirect_target(&current, location)?;
            continue;
        }
        match status {
            StatusCode::OK => {}
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                bail!(
                    "HTTP {status}: the model is gated or private (or its id is misspelled); for a gated model, \
                     accept its license on the hub and set HF_TOKEN"
                )
            }
            StatusCode::NOT_FOUND => bail!("HTTP 404: no such model, or it has no tokenizer.json"),
            other => bail!("HTTP {other}"),
        }
        let body = response.into_body().collect().await.map_err(|e| anyhow!("reading the body: {e}"))?;
        return Ok(body.to_bytes());
    }
    bail!("more than {MAX_REDIRECTS} redirects")
}

async fn get(
    client: &ScrapeClient,
    uri: &Uri,
    bearer_token: Option<&str>,
) -> Result<http::Response<hyper::body::Incoming>> {
    let mut request =
        http::Request::get(uri.clone()).header(http::header::USER_AGENT, concat!("aiperf/", env!("CARGO_PKG_VERSION")));
    if let Some(token) = bearer_token {
        request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(Empty::new()).context("building the download request")?;
    client.request(request).await.map_err(|e| anyhow!("{}", error_chain(&e)))
}

/// hyper's error and its causes on one line ("client error (Connect): tcp connect error: …").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The URL a `Location` header points at, relative to `from`.
fn redirect_target(from: &Uri, location: &str) -> Result<Uri> {
    if location.starts_with('/') {
        let scheme = from.scheme_str().unwrap_or("https");
        let authority = from.authority().map(|a| a.as_str()).unwrap_or_default();
        format!("{scheme}://{authority}{location}").parse().with_context(|| format!("bad redirect `{location}`"))
    } else {
        location.parse().with_context(|| format!("bad redirect `{location}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;

    const FIXTURE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");

    fn settings(cache: &Path, endpoint: &str) -> HubSettings {
        HubSettings {
            cache_root: cache.join("aiperf"),
            hf_hub_cache: Some(cache.join("hf")),
            endpoint: endpoint.into(),
            token: None,
            offline: false,
        }
    }

    /// Serves `responses` in order, one per connection; sends each request's head back on the channel.
    fn tiny_server(responses: Vec<Vec<u8>>) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (heads, received) = mpsc::channel();
        std::thread::spawn(move || {
            for response in responses {
                let (mut stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                while reader.read_line(&mut head).unwrap() > 2 {}
                heads.send(head).unwrap();
                stream.write_all(&response).unwrap();
            }
        });
        (base, received)
    }

    fn http_response(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
        let mut response =
            format!("HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                .into_bytes();
        response.extend_from_slice(body);
        response
    }

    #[test]
    fn tokenizer_values_are_builtin_paths_or_model_ids() {
        assert_eq!(spec_of("builtin"), TokenizerSpec::Builtin);
        assert_eq!(spec_of("gpt2"), TokenizerSpec::Hub { id: "gpt2".into(), revision: None });
        assert_eq!(spec_of("cl100k_base"), TokenizerSpec::Encoding { name: "cl100k_base".into() });
        assert_eq!(
            spec_of("meta-llama/Llama-3.1-8B"),
            TokenizerSpec::Hub { id: "meta-llama/Llama-3.1-8B".into(), revision: None }
        );
        assert_eq!(spec_of(FIXTURE), TokenizerSpec::File { path: FIXTURE.into() });
        for path in ["/no/such/tokenizer.json", "./tok", "a/b/c", "tok.json", "../x", "~/tok"] {
            assert_eq!(spec_of(path), TokenizerSpec::File { path: path.into() }, "{path}");
        }
    }

    #[test]
    fn aiperf_cache_comes_first_then_the_hf_hub_cache() {
        let dir = tempfile::tempdir().unwrap();
        let settings = settings(dir.path(), "http://127.0.0.1:1");
        let snapshot = dir.path().join("hf/models--org--model/snapshots/abc123");
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::copy(FIXTURE, snapshot.join(TOKENIZER_FILE)).unwrap();
        assert_eq!(resolve("org/model", None, &settings).unwrap(), snapshot.join(TOKENIZER_FILE));

        let cached = settings.cached_path("org/model", None);
        std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
        std::fs::copy(FIXTURE, &cached).unwrap();
        assert_eq!(resolve("org/model", None, &settings).unwrap(), cached);
        assert!(cached.ends_with("aiperf/tokenizers/org/model/tokenizer.json"));
    }

    #[test]
    fn the_hf_snapshot_named_by_refs_main_wins() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("models--gpt2");
        for revision in ["aaa", "zzz"] {
            std::fs::create_dir_all(model.join("snapshots").join(revision)).unwrap();
            std::fs::write(model.join("snapshots").join(revision).join(TOKENIZER_FILE), "{}").unwrap();
        }
        assert_eq!(hf_hub_snapshot(dir.path(), "gpt2").unwrap(), model.join("snapshots/aaa/tokenizer.json"));
        std::fs::create_dir_all(model.join("refs")).unwrap();
        std::fs::write(model.join("refs/main"), "zzz\n").unwrap();
        assert_eq!(hf_hub_snapshot(dir.path(), "gpt2").unwrap(), model.join("snapshots/zzz/tokenizer.json"));
        assert!(hf_hub_snapshot(dir.path(), "other").is_none());
    }

    #[test]
    fn a_revision_is_found_by_its_ref_or_commit_and_fetched_from_its_own_path() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("hf/models--org--model");
        for commit in ["c0ffee", "dec0de"] {
            std::fs::create_dir_all(model.join("snapshots").join(commit)).unwrap();
            std::fs::copy(FIXTURE, model.join("snapshots").join(commit).join(TOKENIZER_FILE)).unwrap();
        }
        std::fs::create_dir_all(model.join("refs")).unwrap();
        std::fs::write(model.join("refs/main"), "c0ffee").unwrap();
        std::fs::write(model.join("refs/v1"), "dec0de\n").unwrap();
        let body = std::fs::read(FIXTURE).unwrap();
        let (base, heads) = tiny_server(vec![http_response("200 OK", "", &body)]);
        let settings = settings(dir.path(), &base);
        let snapshot = |commit: &str| model.join("snapshots").join(commit).join(TOKENIZER_FILE);
        assert_eq!(resolve("org/model", None, &settings).unwrap(), snapshot("c0ffee"));
        assert_eq!(resolve("org/model", Some("v1"), &settings).unwrap(), snapshot("dec0de"), "a tag's ref");
        assert_eq!(resolve("org/model", Some("dec0de"), &settings).unwrap(), snapshot("dec0de"), "a commit");
        assert!(heads.try_recv().is_err(), "the caches answered");
        // A revision the caches lack is fetched from its own path into a folder of its own,
        // not taken from another snapshot.
        let path = resolve("org/model", Some("refs/pr/7"), &settings).unwrap();
        assert_eq!(path, settings.cached_path("org/model", Some("refs/pr/7")));
        assert!(path.ends_with("tokenizers/org/model/@refs--pr--7/tokenizer.json"), "{}", path.display());
        let head = heads.recv().unwrap();
        assert!(head.starts_with("GET /org/model/resolve/refs%2Fpr%2F7/tokenizer.json HTTP/1.1"), "{head}");
    }

    #[test]
    fn a_download_follows_the_redirect_sends_the_token_and_lands_in_the_cache() {
        let body = std::fs::read(FIXTURE).unwrap();
        let (base, heads) = tiny_server(vec![
            http_response("302 Found", "Location: /cdn/tokenizer.json\r\n", b""),
            http_response("200 OK", "Content-Type: application/json\r\n", &body),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let mut settings = settings(dir.path(), &format!("{base}/"));
        settings.token = Some("hf_secret".into());

        let path = resolve("org/model", None, &settings).unwrap();
        assert_eq!(path, settings.cached_path("org/model", None));
        assert_eq!(std::fs::read(&path).unwrap(), body);
        let first = heads.recv().unwrap();
        assert!(first.starts_with("GET /org/model/resolve/main/tokenizer.json HTTP/1.1"), "{first}");
        assert!(first.to_ascii_lowercase().contains("authorization: bearer hf_secret"), "{first}");
        assert!(heads.recv().unwrap().starts_with("GET /cdn/tokenizer.json"));
        // No partial file is left beside it.
        assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn a_download_brings_the_companion_files_the_hub_has() {
        let config = br#"{"chat_template": "{{ messages }}"}"#;
        let (base, heads) = tiny_server(vec![
            http_response("200 OK", "", &std::fs::read(FIXTURE).unwrap()),
            http_response("200 OK", "", config),
            http_response("404 Not Found", "", b""),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let settings = settings(dir.path(), &base);
        let path = resolve("org/model", Some("v2"), &settings).unwrap();
        assert_eq!(std::fs::read(path.with_file_name("tokenizer_config.json")).unwrap(), config);
        let mut files: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["tokenizer.json", "tokenizer_config.json"], "the missing one left out, nothing partial");
        let asked: Vec<String> =
            heads.try_iter().map(|head| head.lines().next().unwrap_or_default().to_string()).collect();
        assert_eq!(
            asked,
            [
                "GET /org/model/resolve/v2/tokenizer.json HTTP/1.1",
                "GET /org/model/resolve/v2/tokenizer_config.json HTTP/1.1",
                "GET /org/model/resolve/v2/chat_template.jinja HTTP/1.1",
            ]
        );
    }

    #[test]
    fn a_page_that_is_not_a_tokenizer_is_not_cached() {
        let (base, _heads) = tiny_server(vec![http_response("200 OK", "", b"<html>login</html>")]);
        let dir = tempfile::tempdir().unwrap();
        let settings = settings(dir.path(), &base);
        let error = format!("{:#}", resolve("gpt2", None, &settings).unwrap_err());
        assert!(error.contains("not a tokenizer.json"), "{error}");
        assert!(!settings.cached_path("gpt2", None).exists());
    }

    #[test]
    fn a_gated_model_says_to_set_hf_token() {
        let (base, _heads) = tiny_server(vec![http_response("401 Unauthorized", "", b"")]);
        let dir = tempfile::tempdir().unwrap();
        let error = resolve("meta-llama/Llama-3.1-8B", None, &settings(dir.path(), &base)).unwrap_err().to_string();
        assert!(error.contains("HTTP 401") && error.contains("HF_TOKEN"), "{error}");
    }

    #[test]
    fn hf_hub_offline_uses_the_caches_and_never_connects() {
        let (base, heads) = tiny_server(vec![http_response("200 OK", "", &std::fs::read(FIXTURE).unwrap())]);
        let dir = tempfile::tempdir().unwrap();
        let mut settings = settings(dir.path(), &base);
        settings.offline = true;
        let error = resolve("gpt2", None, &settings).unwrap_err().to_string();
        assert!(error.contains("HF_HUB_OFFLINE is set"), "{error}");
        assert!(heads.try_recv().is_err(), "no request was made");
        let cached = settings.cached_path("gpt2", None);
        std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
        std::fs::copy(FIXTURE, &cached).unwrap();
        assert_eq!(resolve("gpt2", None, &settings).unwrap(), cached);
    }

    #[test]
    fn offline_the_error_says_what_to_do() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let settings = settings(dir.path(), &format!("http://127.0.0.1:{port}"));
        let error = resolve("gpt2", None, &settings).unwrap_err().to_string();
        assert!(error.contains(&format!("http://127.0.0.1:{port}/gpt2/resolve/main/tokenizer.json")), "{error}");
        assert!(error.contains(&settings.cached_path("gpt2", None).display().to_string()), "{error}");
        assert!(error.contains("tokenizer: \"builtin\""), "{error}");
        assert!(error.contains("/path/to/tokenizer.json"), "{error}");
    }
}
