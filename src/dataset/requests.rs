//! Dataset entries as request bodies: the endpoint kind's body for the prompt, then what an
//! entry brings of its own: a rankings entry's query and passages, and its images as
//! `image_url` parts (chat only). Keeps how many images each request carries, for the metrics.

use anyhow::{Context, Result, bail};
use bytes::Bytes;

use super::DatasetEntry;
use crate::client::{rankings_request_body, with_image_parts};
use crate::load::PreparedRequest;
use crate::plan::{Dataset, Endpoint, EndpointKind};

/// The requests of a dataset, in dataset order.
pub struct Prepared {
    pub requests: Vec<PreparedRequest>,
    /// Images sent with each request, by its index in `requests`.
    pub images: Vec<u32>,
}

/// The request of every entry of `dataset` for `endpoint`.
pub fn prepare(dataset: &Dataset, endpoint: &Endpoint, entries: Vec<DatasetEntry>) -> Result<Prepared> {
    check_kind(dataset, endpoint, &entries)?;
    let mut prepared =
        Prepared { requests: Vec::with_capacity(entries.len()), images: Vec::with_capacity(entries.len()) };
    for (index, mut entry) in entries.into_iter().enumerate() {
        let images = std::mem::take(&mut entry.images);
        let ranking = entry.ranking.take();
        let mut request = PreparedRequest::of(endpoint, entry);
        if let Some(ranking) = ranking {
            request.body = Bytes::from(rankings_request_body(endpoint, &ranking.query, &ranking.passages));
        }
        if !images.is_empty() {
            let Some(body) = with_image_parts(&request.body, &images)
                .with_context(|| format!("adding images to request {index} of the dataset"))?
            else {
                bail!("images need a chat endpoint (kind: \"chat\"); request {index} has no `messages`");
            };
            request.body = Bytes::from(body);
        }
        prepared.images.push(images.len() as u32);
        prepared.requests.push(request);
    }
    Ok(prepared)
}

/// Images go to chat endpoints only, a file's queries and passages to rankings endpoints only.
fn check_kind(dataset: &Dataset, endpoint: &Endpoint, entries: &[DatasetEntry]) -> Result<()> {
    let Dataset::File(file) = dataset else { return Ok(()) };
    let kind = endpoint.kind;
    if kind != EndpointKind::Chat && entries.iter().any(|entry| !entry.images.is_empty()) {
        bail!(
            "dataset file {}: entries with \"image\" or \"images\" need a chat endpoint (kind: \"chat\"), not \"{}\"",
            file.path,
            kind.as_str()
        );
    }
    let rankings = matches!(kind, EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings);
    if !rankings && entries.iter().any(|entry| entry.ranking.is_some()) {
        bail!(
            "dataset file {}: entries with \"query\" and \"passages\" need a rankings endpoint (kind: \"rankings\"), not \"{}\"",
            file.path,
            kind.as_str()
        );
    }
    Ok(())
}
