//! The mock's SGLang-style video generation API: `POST /v1/videos` queues a job (the prompt,
//! `num_inference_steps`), `GET /v1/videos/{id}` tells its status (`queued`, then `completed`
//! with `inference_time_s` and `peak_memory_mb` once its time has passed), and
//! `GET /v1/videos/{id}/content` hands over the video (a small MP4 header) and forgets the job.
//! A job takes the time to first token plus one inter-token delay per inference step.

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::body::MockBody;
use super::form;
use super::generate::read_body;
use super::reply;
use super::request::parse_json;
use super::state::MockState;
use super::video_jobs::{MAX_JOBS, VideoJob, make_room};

/// Inference steps of a job that names none.
const DEFAULT_STEPS: u64 = 8;
/// Peak memory the mock reports: this much, plus one MB per prompt token.
const BASE_PEAK_MEMORY_MB: f64 = 2048.0;
/// The start of an MP4 file (an `ftyp` box), the video every job makes.
const VIDEO_BYTES: &[u8] = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom";

#[derive(Deserialize)]
struct CreateRequest {
    prompt: Option<String>,
    model: Option<String>,
    num_inference_steps: Option<u64>,
}

/// `POST /v1/videos`: a JSON body, or the same fields as a form (vLLM's video API takes one).
pub async fn create(state: Arc<MockState>, request: Request<Incoming>) -> Response<MockBody> {
    let headers = request.headers().clone();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let read = if form::is_form(&headers) {
        create_request_of_form(&headers, &body)
    } else {
        parse_json::<CreateRequest>(&body)
    };
    let request = match read {
        Ok(request) => request,
        Err(message) => return reply::invalid_request(&message),
    };
    let Some(prompt) = request.prompt.filter(|prompt| !prompt.is_empty()) else {
        return reply::invalid_request("missing field `prompt`");
    };
    let steps = request.num_inference_steps.unwrap_or(DEFAULT_STEPS).min(1_000) as u32;
    let takes: Duration = state.timing.time_to_first_token + state.timing.inter_token * steps;
    let job = VideoJob {
        model: request.model.unwrap_or_else(|| state.default_model().to_string()),
        ready_at: Instant::now() + takes,
        inference_s: takes.as_secs_f64(),
        peak_memory_mb: BASE_PEAK_MEMORY_MB + state.tokenizer.count(&prompt) as f64,
    };
    let id = state.next_response_id("video");
    let answer = describe(&id, &job, Instant::now());
    {
        let mut jobs = state.video_jobs.lock();
        if !make_room(&mut jobs, Instant::now()) {
            let message = format!("{MAX_JOBS} video jobs are waiting to be fetched");
            return reply::error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "too_many_jobs", &message);
        }
        jobs.insert(id, job);
    }
    reply::json(StatusCode::OK, answer.to_string())
}

/// The job a form asks for: its `prompt`, `model` and `num_inference_steps` fields.
fn create_request_of_form(headers: &http::HeaderMap, body: &[u8]) -> Result<CreateRequest, String> {
    let parts = form::parse(headers, body)?;
    let steps = match form::text(&parts, "num_inference_steps") {
        Some(text) => Some(text.trim().parse().map_err(|_| format!("num_inference_steps `{text}` is not a count"))?),
        None => None,
    };
    let field = |name: &str| form::text(&parts, name).map(str::to_string);
    Ok(CreateRequest { prompt: field("prompt"), model: field("model"), num_inference_steps: steps })
}

/// `GET /v1/videos/{id}` and `GET /v1/videos/{id}/content`.
pub fn job(state: &MockState, path: &str) -> Response<MockBody> {
    let rest = path.trim_start_matches("/v1/videos/");
    let (id, content) = match rest.strip_suffix("/content") {
        Some(id) => (id, true),
        None => (rest, false),
    };
    let now = Instant::now();
    let mut jobs = state.video_jobs.lock();
    let Some(job) = jobs.get(id).cloned() else {
        let message = format!("no video job {id:?}");
        return reply::error(StatusCode::NOT_FOUND, "not_found_error", "video_not_found", &message);
    };
    if !content {
        return reply::json(StatusCode::OK, describe(id, &job, now).to_string());
    }
    if now < job.ready_at {
        let message = format!("video job {id} is not completed yet");
        return reply::error(StatusCode::CONFLICT, "invalid_request_error", "video_not_ready", &message);
    }
    jobs.remove(id);
    reply::with_body(StatusCode::OK, "video/mp4", MockBody::whole(VIDEO_BYTES))
}

/// The job object: `queued` until its time has passed, then `completed` with the figures.
fn describe(id: &str, job: &VideoJob, now: Instant) -> Value {
    if now < job.ready_at {
        return json!({"id": id, "object": "video", "model": job.model, "status": "queued", "progress": 0});
    }
    json!({"id": id, "object": "video", "model": job.model, "status": "completed", "progress": 100,
           "inference_time_s": job.inference_s, "peak_memory_mb": job.peak_memory_mb})
}
