//! The informational endpoints: `GET /v1/models`, `GET /health` and `GET /metrics`.

use http::{Response, StatusCode};

use super::body::MockBody;
use super::prom;
use super::reply;
use super::state::MockState;

pub fn models(state: &MockState) -> Response<MockBody> {
    let data: Vec<serde_json::Value> = state
        .served_models()
        .into_iter()
        .map(|id| serde_json::json!({"id": id, "object": "model", "created": state.started_epoch_s, "owned_by": "aiperf-mock"}))
        .collect();
    reply::json(StatusCode::OK, serde_json::json!({"object": "list", "data": data}).to_string())
}

pub fn health() -> Response<MockBody> {
    reply::json(StatusCode::OK, r#"{"status":"ok"}"#.to_string())
}

pub fn metrics(state: &MockState) -> Response<MockBody> {
    let spec_decode_tokens = state.spec_decoder.as_ref().map(|decoder| decoder.draft_tokens());
    let mut text = prom::render(&state.stats.snapshot(), spec_decode_tokens);
    state.control.render(&mut text);
    reply::with_body(StatusCode::OK, prom::CONTENT_TYPE, MockBody::whole(text))
}
