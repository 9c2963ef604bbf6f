//! SGLang's video generation API (OpenAI's `/v1/videos` shape; the body that submits a job is
//! built in `request_bodies/`): every answer about the job (the submission and each poll) is a
//! job object with its `id` and `status`, and once `completed` the server's `inference_time_s`
//! and `peak_memory_mb`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::payload::{JsonText, ResponseFields};
use super::wire_usage::WireUsage;
use crate::record::MediaOutput;

/// The job is done and its video can be fetched.
pub(crate) const COMPLETED: &str = "completed";
/// The job failed; its `error` says why.
pub(crate) const FAILED: &str = "failed";

#[derive(Deserialize)]
struct VideoJob<'a> {
    #[serde(borrow)]
    id: Option<JsonText<'a>>,
    #[serde(borrow)]
    status: Option<JsonText<'a>>,
    inference_time_s: Option<f64>,
    peak_memory_mb: Option<f64>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// A job object: its id and status, the server's figures once done; a failed job is an error
/// (its own, or one naming the job).
pub(crate) fn parse_job(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let job: VideoJob = serde_json::from_slice(body)?;
    let (Some(JsonText(id)), Some(JsonText(status))) = (job.id, job.status) else {
        return match job.error {
            Some(error) => Ok(ResponseFields { error: Some(error), ..Default::default() }),
            None => Err(serde::de::Error::missing_field("id and status")),
        };
    };
    let error = match (status.as_ref(), job.error) {
        (_, Some(error)) if !error.is_null() => Some(error),
        (FAILED, _) => Some(json!({ "message": format!("video job {id} failed") })),
        _ => None,
    };
    let media = MediaOutput {
        video_job: Some((id.into_owned(), status.into_owned())),
        video_inference_s: job.inference_time_s,
        video_peak_memory_mb: job.peak_memory_mb,
        ..MediaOutput::default()
    };
    Ok(ResponseFields { usage: job.usage.map(Into::into), error, media: Some(Box::new(media)), ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_give_their_state_and_once_done_the_server_s_figures() {
        let queued = parse_job(br#"{"id":"video_1","object":"video","status":"queued","progress":0}"#).unwrap();
        let media = queued.media.unwrap();
        assert_eq!(media.video_job, Some(("video_1".to_string(), "queued".to_string())));
        assert_eq!(media.video_inference_s, None);

        let done = parse_job(
            br#"{"id":"video_1","status":"completed","inference_time_s":12.5,"peak_memory_mb":20480.0,"error":null}"#,
        )
        .unwrap();
        assert!(done.error.is_none());
        let media = done.media.unwrap();
        assert_eq!((media.video_inference_s, media.video_peak_memory_mb), (Some(12.5), Some(20480.0)));

        let failed = parse_job(br#"{"id":"video_2","status":"failed"}"#).unwrap();
        assert_eq!(failed.error.unwrap()["message"], "video job video_2 failed");
        assert!(parse_job(br#"{"status":"queued"}"#).is_err());
    }
}
