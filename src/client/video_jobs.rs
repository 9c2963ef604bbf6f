//! Following a video generation job after its submission as AIPerf follows one: GET
//! `/v1/videos/{id}` at once, then again after each poll interval (`video_poll_interval`, AIPerf's
//! `AIPERF_HTTP_VIDEO_POLL_INTERVAL`, 0.1 s by default), until the job is `completed` (or
//! `failed`); the record ends at the answer that says so, or, with `download_video_content`,
//! once GET `/v1/videos/{id}/content` has fetched the video (as AIPerf's
//! `--download-video-content`). What the submission answered about the job's state is not
//! taken as its end: AIPerf polls at least once. Every answer goes through the client's pool
//! and headers, within the request's timeout.

use bytes::{Bytes, BytesMut};
use http::{Method, StatusCode, Uri};
use http_body_util::BodyExt;

use super::connect::Sender;
use super::destinations::Destination;
use super::response::parse_full_body;
use super::video_generation::{COMPLETED, FAILED};
use super::{HttpClient, failure};
use crate::http_trace::HttpTrace;
use crate::record::{RecordError, RequestRecord};

impl HttpClient {
    /// Poll the job the record's submission answered with until it ends, then fetch its video
    /// when asked to. A failed job, a bad answer or a broken connection ends the record with its
    /// error.
    pub(super) async fn follow_video_job(&self, destination: &Destination, record: &mut RequestRecord) {
        let Some((id, _submitted)) = record.media.video_job.clone() else {
            record.error = Some(failure::invalid_request("the video job answer has no id".into()));
            return;
        };
        let job_uri = match job_uri(destination, &id) {
            Ok(uri) => uri,
            Err(error) => return self.fail(record, error),
        };
        loop {
            let answer = match self.get(destination, &job_uri, record.origin.dataset_index as u64).await {
                Ok(answer) => answer,
                Err(error) => return self.fail(record, error),
            };
            let now_ns = self.clock.now_ns();
            record.end_ns = now_ns;
            if let Some(raw) = &mut record.raw {
                raw.push(now_ns, b"", &answer);
            }
            match parse_full_body(&self.format, &answer) {
                Ok(fields) => match &fields.error {
                    Some(error) => {
                        let message = failure::error_message(error);
                        return self.fail(record, failure::response_error(StatusCode::OK, message));
                    }
                    None => fields.record_into(record, now_ns),
                },
                Err(_) => return self.fail(record, failure::invalid_response("video job status", &answer)),
            }
            match record.media.video_job.as_ref().map(|(_, status)| status.as_str()) {
                Some(COMPLETED) if self.download_videos => {
                    return self.fetch_video(destination, record, &format!("{job_uri}/content")).await;
                }
                Some(COMPLETED | FAILED) => return,
                _ => tokio::time::sleep(self.video_poll_interval).await,
            }
        }
    }

    /// Download the finished video (counted, not kept).
    async fn fetch_video(&self, destination: &Destination, record: &mut RequestRecord, content_uri: &str) {
        match self.get(destination, content_uri, record.origin.dataset_index as u64).await {
            Ok(_video) => record.end_ns = self.clock.now_ns(),
            Err(error) => self.fail(record, error),
        }
    }

    /// GET `uri` over the pool: the whole 2xx body (at most `max_response_bytes`), or the error.
    async fn get(&self, destination: &Destination, uri: &str, session: u64) -> Result<Bytes, RecordError> {
        let absolute: Uri = uri.parse().map_err(|_| failure::invalid_request(format!("bad job url {uri:?}")))?;
        let mut scratch = HttpTrace::default();
        let pool = &destination.pool;
        let mut lease =
            pool.check_out(session, false, &mut scratch).await.map_err(|why| failure::connect_failed(why, uri))?;
        let target = match lease.connection.sender {
            Sender::Http2(_) => absolute,
            Sender::Http1(_) => absolute.path_and_query().map_or(Uri::from_static("/"), |path| Uri::from(path.clone())),
        };
        let request = self.with_endpoint_headers(destination, Method::GET, target, Bytes::new());
        let status = lease.send(request).await.map_err(|error| failure::connection_error(&error, uri))?.0.status();
        let mut body = lease.body();
        let mut collected = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|error| failure::connection_error(&error, uri))?;
            let Some(data) = frame.data_ref() else { continue };
            if collected.len().saturating_add(data.len()) > self.limits.max_response_bytes {
                return Err(failure::response_too_large(self.limits.max_response_bytes));
            }
            collected.extend_from_slice(data);
        }
        pool.check_in(lease);
        if !status.is_success() {
            return Err(failure::http_error(status, failure::error_body_message(&collected)));
        }
        Ok(collected.freeze())
    }
}

/// `/v1/videos/{id}` under the submission's url; an id that is not a plain name is refused.
fn job_uri(destination: &Destination, id: &str) -> Result<String, RecordError> {
    if id.is_empty() || !id.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_.".contains(&byte)) {
        return Err(failure::invalid_request(format!("video job id {id:?} is not a plain name")));
    }
    Ok(format!("{}/{id}", destination.uri_text.trim_end_matches('/')))
}
