//! The mock's rerank routes in three dialects: Cohere (`/v1/rerank`, `/v2/rerank`), HF TEI
//! (`/rerank`) and NVIDIA NIM (`/v1/ranking`). Passages score in the order they came, after
//! the configured time to first token.

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::MockBody;
use super::generate::{count_input_tokens, read_body};
use super::reply;
use super::request::parse_json;
use super::state::MockState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Cohere,
    Tei,
    Nim,
}

/// The query, the passages, and how many results to return, as one dialect sends them.
#[derive(Debug)]
struct RerankRequest {
    query: String,
    passages: Vec<String>,
    top_n: Option<usize>,
}

/// A text given as a string or as `{"text": ..}` (Cohere documents and NIM's query and passages).
#[derive(Deserialize)]
#[serde(untagged)]
enum WireText {
    Plain(String),
    Object { text: String },
}

impl From<WireText> for String {
    fn from(text: WireText) -> Self {
        match text {
            WireText::Plain(text) | WireText::Object { text } => text,
        }
    }
}

#[derive(Deserialize)]
struct WireRequest {
    query: Option<WireText>,
    /// Cohere.
    documents: Option<Vec<WireText>>,
    /// TEI.
    texts: Option<Vec<WireText>>,
    /// NIM.
    passages: Option<Vec<WireText>>,
    top_n: Option<usize>,
}

fn parse(dialect: Dialect, body: &[u8]) -> Result<RerankRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let (passages, field) = match dialect {
        Dialect::Cohere => (wire.documents, "documents"),
        Dialect::Tei => (wire.texts, "texts"),
        Dialect::Nim => (wire.passages, "passages"),
    };
    let passages = passages.ok_or_else(|| format!("missing field `{field}`"))?;
    let query = wire.query.ok_or("missing field `query`")?;
    Ok(RerankRequest {
        query: query.into(),
        passages: passages.into_iter().map(Into::into).collect(),
        top_n: wire.top_n,
    })
}

/// The score of the passage at `index`: earlier passages rank higher.
fn score(index: usize) -> f64 {
    1.0 / (1.0 + index as f64)
}

/// The answer body in the dialect's shape, for `ranked` passages and the tokens read.
fn answer(dialect: Dialect, ranked: usize, tokens: u64) -> Value {
    let ranked = 0..ranked;
    match dialect {
        Dialect::Cohere => json!({
            "id": "rerank-mock",
            "results": ranked.map(|index| json!({"index": index, "relevance_score": score(index)})).collect::<Vec<_>>(),
            "usage": {"total_tokens": tokens},
        }),
        Dialect::Tei => ranked.map(|index| json!({"index": index, "score": score(index)})).collect(),
        Dialect::Nim => json!({
            "rankings": ranked.map(|index| json!({"index": index, "logit": score(index).ln()})).collect::<Vec<_>>(),
        }),
    }
}

pub async fn serve(state: Arc<MockState>, dialect: Dialect, request: Request<Incoming>) -> Response<MockBody> {
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let request = match parse(dialect, &body) {
        Ok(request) => request,
        Err(message) => return reply::invalid_request(&message),
    };
    let ranked = request.top_n.unwrap_or(request.passages.len()).min(request.passages.len());
    let mut texts = request.passages;
    texts.push(request.query);
    let tokens = match count_input_tokens(&state, texts).await {
        Ok(tokens) => tokens,
        Err(reply) => return reply,
    };
    reply::json(StatusCode::OK, answer(dialect, ranked, tokens).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_names_its_passages() {
        let cohere = parse(Dialect::Cohere, br#"{"query":"q","documents":["a",{"text":"b"}],"top_n":1}"#).unwrap();
        assert_eq!(
            (cohere.query.as_str(), cohere.passages, cohere.top_n),
            ("q", vec!["a".into(), "b".into()], Some(1))
        );
        let nim = parse(Dialect::Nim, br#"{"model":"m","query":{"text":"q"},"passages":[{"text":"a"}]}"#).unwrap();
        assert_eq!((nim.query.as_str(), nim.passages), ("q", vec!["a".to_string()]));
        assert!(parse(Dialect::Tei, br#"{"query":"q","documents":["a"]}"#).unwrap_err().contains("`texts`"));
        assert!(parse(Dialect::Tei, br#"{"texts":["a"]}"#).unwrap_err().contains("`query`"));
    }

    #[test]
    fn answers_follow_each_dialect() {
        assert_eq!(answer(Dialect::Tei, 2, 9), json!([{"index": 0, "score": 1.0}, {"index": 1, "score": 0.5}]));
        let cohere = answer(Dialect::Cohere, 1, 9);
        assert_eq!(
            (cohere["results"][0]["relevance_score"].as_f64(), cohere["usage"]["total_tokens"].as_u64()),
            (Some(1.0), Some(9))
        );
        assert_eq!(answer(Dialect::Nim, 1, 9)["rankings"][0]["logit"], 0.0);
    }
}
