//! Reading whole (non-streamed) response bodies: a JSON answer into the record, or an error
//! answer into its `http_error`.

use super::traced_body::TracedBody;
use http::StatusCode;
use http_body_util::BodyExt;

use crate::clock::RunClock;
use crate::record::RequestRecord;

use super::failure;
use super::response::{self, PayloadFormat};

/// Read a 2xx JSON body into `record`; its text counts as one chunk at the last byte.
pub(crate) async fn read_json_response(
    body: TracedBody<'_>,
    status: StatusCode,
    format: &PayloadFormat,
    clock: &RunClock,
    uri: &str,
    record: &mut RequestRecord,
) {
    let collected = body.collect().await;
    let end_ns = clock.now_ns();
    record.end_ns = end_ns;
    let bytes = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            record.error = Some(failure::connection_error(&error, uri));
            return;
        }
    };
    if let Some(raw) = &mut record.raw {
        raw.push(end_ns, b"", &bytes);
    }
    match response::parse_full_body(format, &bytes) {
        Ok(fields) => match &fields.error {
            Some(error) => record.error = Some(failure::http_error(status, failure::error_message(error))),
            None => fields.record_into(record, end_ns),
        },
        Err(_) => record.error = Some(failure::invalid_response("response body", &bytes)),
    }
}

/// Read the body of a non-2xx answer into `record.error`.
pub(crate) async fn read_error_response(
    body: TracedBody<'_>,
    status: StatusCode,
    clock: &RunClock,
    record: &mut RequestRecord,
) {
    let body = body.collect().await.map(|collected| collected.to_bytes()).unwrap_or_default();
    record.end_ns = clock.now_ns();
    if let Some(raw) = &mut record.raw {
        raw.push(record.end_ns, b"", &body);
    }
    record.error = Some(failure::http_error(status, failure::error_body_message(status, &body)));
}
