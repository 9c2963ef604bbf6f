//! The rankings (rerank) bodies in three dialects: Cohere (`/v1/rerank`), Hugging Face TEI
//! (`/rerank`) and NVIDIA NIM (`/v1/ranking`). A dataset entry's own query and passages are sent
//! as they are; any other prompt becomes a query and passages: its words cut into
//! `passages + 1` near-equal runs, the first run the query.

use serde_json::{Map, Value, json};

use super::with_extra;
use crate::plan::{Endpoint, EndpointKind};

/// Passages per query when the endpoint does not say.
const DEFAULT_PASSAGES: usize = 4;

/// The query and the passages cut from `prompt` (fewer passages when it has too few words).
fn query_and_passages(prompt: &str, passages: usize) -> (String, Vec<String>) {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let pieces = passages + 1;
    let mut runs =
        (0..pieces).map(|piece| words[piece * words.len() / pieces..(piece + 1) * words.len() / pieces].join(" "));
    let query = runs.next().unwrap_or_default();
    (query, runs.filter(|run| !run.is_empty()).collect())
}

/// The request body of `endpoint`'s dialect for a prompt cut into a query and passages.
pub(super) fn body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let (query, passages) = query_and_passages(prompt, endpoint.request.passages.unwrap_or(DEFAULT_PASSAGES));
    query_body(endpoint, query, passages)
}

/// The request body of `endpoint`'s dialect for `query` and `passages`, plus its extra fields.
pub(super) fn query_body(endpoint: &Endpoint, query: String, passages: Vec<String>) -> Map<String, Value> {
    let mut body = Map::new();
    match endpoint.kind {
        EndpointKind::TeiRankings => {
            body.insert("query".into(), query.into());
            body.insert("texts".into(), passages.into());
        }
        EndpointKind::NimRankings => {
            body.insert("model".into(), endpoint.model.as_str().into());
            body.insert("query".into(), json!({ "text": query }));
            body.insert("passages".into(), passages.into_iter().map(|text| json!({ "text": text })).collect());
        }
        _ => {
            body.insert("model".into(), endpoint.model.as_str().into());
            body.insert("query".into(), query.into());
            body.insert("documents".into(), passages.into());
        }
    }
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(kind: EndpointKind, passages: Option<usize>) -> Endpoint {
        Endpoint {
            model: "reranker".into(),
            request: crate::plan::RequestOptions { passages, ..Default::default() },
            ..crate::request_bodies::test_endpoint(kind)
        }
    }

    fn body_of(kind: EndpointKind, prompt: &str, passages: Option<usize>) -> Value {
        serde_json::from_slice(&crate::request_bodies::request_body(&endpoint(kind, passages), prompt, Some(5)))
            .unwrap()
    }

    #[test]
    fn a_prompt_is_cut_into_a_query_and_near_equal_passages() {
        let (query, passages) = query_and_passages("q1 q2 a1 a2 b1 b2 c1 c2", 3);
        assert_eq!(query, "q1 q2");
        assert_eq!(passages, ["a1 a2", "b1 b2", "c1 c2"]);
        let (query, passages) = query_and_passages("only two", 4);
        assert_eq!((query.as_str(), passages), ("", vec!["only".to_string(), "two".to_string()]));
    }

    #[test]
    fn each_dialect_shapes_its_body() {
        let prompt = "what is rust a language a mineral";
        assert_eq!(
            body_of(EndpointKind::CohereRankings, prompt, Some(2)),
            json!({"model": "reranker", "query": "what is", "documents": ["rust a", "language a mineral"]})
        );
        assert_eq!(
            body_of(EndpointKind::TeiRankings, prompt, Some(2)),
            json!({"query": "what is", "texts": ["rust a", "language a mineral"]})
        );
        assert_eq!(
            body_of(EndpointKind::NimRankings, prompt, Some(2)),
            json!({"model": "reranker", "query": {"text": "what is"},
                   "passages": [{"text": "rust a"}, {"text": "language a mineral"}]})
        );
        let given = crate::request_bodies::rankings_request_body(
            &endpoint(EndpointKind::NimRankings, Some(1)),
            "what is rust",
            &["a language".to_string(), "a mineral".to_string(), "a fungus".to_string()],
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&given).unwrap(),
            json!({"model": "reranker", "query": {"text": "what is rust"},
                   "passages": [{"text": "a language"}, {"text": "a mineral"}, {"text": "a fungus"}]}),
            "a dataset's own passages are sent whole, whatever `passages` says"
        );
        let default_passages = body_of(EndpointKind::CohereRankings, "a b c d e f g h i j", None);
        assert_eq!(default_passages["documents"].as_array().map(Vec::len), Some(DEFAULT_PASSAGES));
    }
}
