//! The mock's answer mode (`--accuracy-correct`): a chat or completions request whose last
//! message (or prompt) is a question of the benchmark gets the answer key's reply, whole or as
//! one streamed chunk, instead of generated words.

use http::{Response, StatusCode};

use super::body::MockBody;
use super::chunks::ResponseWriter;
use super::reply;
use super::request::Usage;

/// `text` as it sits inside a JSON string.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::Value::from(text).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// The reply `text` in the endpoint's shape.
pub fn respond(
    writer: &ResponseWriter,
    text: &str,
    stream: bool,
    include_usage: bool,
    usage: Usage,
) -> Response<MockBody> {
    let escaped = json_escaped(text);
    if !stream {
        return reply::json(StatusCode::OK, writer.whole_response(&escaped, usage));
    }
    let mut events = String::new();
    writer.push_opening_chunk(&mut events, None);
    writer.push_token_chunk(&mut events, &escaped, true);
    if include_usage {
        writer.push_usage_chunk(&mut events, usage);
    }
    writer.push_done(&mut events);
    reply::with_body(StatusCode::OK, "text/event-stream", MockBody::whole(events))
}
