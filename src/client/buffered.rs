//! Reading whole (non-streamed) response bodies, never more than the endpoint's
//! `max_response_bytes`: a JSON answer into the record, or an error answer into its error.

use super::traced_body::TracedBody;
use bytes::{Bytes, BytesMut};
use http::StatusCode;
use http_body_util::BodyExt;

use crate::clock::RunClock;
use crate::record::RequestRecord;

use super::failure;
use super::response::{self, PayloadFormat};

/// A body read whole, or why not.
enum Collected {
    Whole(Bytes),
    /// It passed the cap; the rest was left unread.
    TooLarge,
    Broken(std::io::Error),
}

/// Read `body` to its end unless it passes `max_bytes`.
async fn collect_capped(mut body: TracedBody<'_>, max_bytes: usize) -> Collected {
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                let Some(data) = frame.data_ref() else { continue };
                if collected.len().saturating_add(data.len()) > max_bytes {
                    return Collected::TooLarge;
                }
                collected.extend_from_slice(data);
            }
            Err(error) => return Collected::Broken(error),
        }
    }
    Collected::Whole(collected.freeze())
}

/// Read a 2xx JSON body of at most `max_bytes` into `record`; its text counts as one chunk at
/// the last byte.
pub(crate) async fn read_json_response(
    body: TracedBody<'_>,
    status: StatusCode,
    format: &PayloadFormat,
    max_bytes: usize,
    clock: &RunClock,
    uri: &str,
    record: &mut RequestRecord,
) {
    let collected = collect_capped(body, max_bytes).await;
    let end_ns = clock.now_ns();
    record.end_ns = end_ns;
    let bytes = match collected {
        Collected::Whole(bytes) => bytes,
        Collected::TooLarge => {
            record.error = Some(failure::response_too_large(max_bytes));
            return;
        }
        Collected::Broken(error) => {
            record.error = Some(failure::connection_error(&error, uri));
            return;
        }
    };
    if let Some(raw) = &mut record.raw {
        raw.push(end_ns, b"", &bytes);
    }
    match response::parse_full_body(format, &bytes) {
        Ok(fields) => match &fields.error {
            Some(error) => record.error = Some(failure::response_error(status, failure::error_message(error))),
            None => fields.record_into(record, end_ns),
        },
        Err(_) => record.error = Some(failure::invalid_response("response body", &bytes)),
    }
}

/// Read the body of a non-2xx answer (at most `max_bytes`; more is not kept) into
/// `record.error`.
pub(crate) async fn read_error_response(
    body: TracedBody<'_>,
    status: StatusCode,
    max_bytes: usize,
    clock: &RunClock,
    record: &mut RequestRecord,
) {
    let body = match collect_capped(body, max_bytes).await {
        Collected::Whole(bytes) => bytes,
        Collected::TooLarge | Collected::Broken(_) => Bytes::new(),
    };
    record.end_ns = clock.now_ns();
    if let Some(raw) = &mut record.raw {
        raw.push(record.end_ns, b"", &body);
    }
    record.error = Some(failure::http_error(status, failure::error_body_message(&body)));
}
