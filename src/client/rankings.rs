//! The rankings (rerank) endpoints in three dialects: Cohere (`/v1/rerank`), Hugging Face TEI
//! (`/rerank`) and NVIDIA NIM (`/v1/ranking`; their bodies are built in `request_bodies/`):
//! each dialect's answer must carry its list of scores.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::payload::ResponseFields;
use super::wire_usage::WireUsage;
use crate::plan::EndpointKind;

/// Cohere: `{"results": [{"index", "relevance_score"}]}`; NIM: `{"rankings": [{"index", "logit"}]}`.
#[derive(Deserialize)]
struct ScoredResponse {
    results: Option<Vec<IgnoredAny>>,
    rankings: Option<Vec<IgnoredAny>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// The usage (or error) of a rankings answer; an answer without its dialect's score list is invalid.
pub(crate) fn parse_response(kind: EndpointKind, body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    if kind == EndpointKind::TeiRankings {
        // TEI answers with a bare list `[{"index", "score"}]`, or `{"error", "error_type"}`.
        return match serde_json::from_slice(body)? {
            Value::Array(_) => Ok(ResponseFields::default()),
            Value::Object(mut failed) if failed.contains_key("error") => {
                Ok(ResponseFields { error: failed.remove("error"), ..Default::default() })
            }
            _ => Err(serde::de::Error::custom("expected a list of scores")),
        };
    }
    let response: ScoredResponse = serde_json::from_slice(body)?;
    let (scores, field) = match kind {
        EndpointKind::NimRankings => (&response.rankings, "rankings"),
        _ => (&response.results, "results"),
    };
    if scores.is_none() && response.error.is_none() {
        return Err(serde::de::Error::missing_field(field));
    }
    Ok(ResponseFields { usage: response.usage.map(Into::into), error: response.error, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_needs_its_score_list() {
        let cohere = parse_response(
            EndpointKind::CohereRankings,
            br#"{"results":[{"index":1,"relevance_score":0.9}],"usage":{"total_tokens":12}}"#,
        )
        .unwrap();
        assert_eq!(cohere.usage.and_then(|usage| usage.total_tokens), Some(12));
        assert!(parse_response(EndpointKind::CohereRankings, br#"{"rankings":[]}"#).is_err());
        assert!(parse_response(EndpointKind::NimRankings, br#"{"rankings":[{"index":0,"logit":1.5}]}"#).is_ok());
        assert!(parse_response(EndpointKind::NimRankings, br#"{"results":[]}"#).is_err());
        assert!(parse_response(EndpointKind::TeiRankings, br#"[{"index":0,"score":0.5}]"#).is_ok());
        let failed = parse_response(EndpointKind::TeiRankings, br#"{"error":"overloaded","error_type":"x"}"#).unwrap();
        assert_eq!(failed.error, Some(Value::from("overloaded")));
        assert!(parse_response(EndpointKind::TeiRankings, br#"{"scores":[]}"#).is_err());
    }
}
