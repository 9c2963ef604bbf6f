//! Sends each request to its handler: 404 for unknown paths, 405 for a wrong method, 401
//! for any route but /health and /metrics without the configured key.

use std::convert::Infallible;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use super::body::MockBody;
use super::control::ControlRoute;
use super::images_api::ImageRoute;
use super::request::Endpoint;
use super::rerank::Dialect;
use super::state::MockState;
use super::{
    audio_api, embeddings, generate, image_retrieval, images_api, info, messages_api, reply, rerank, solido_rag,
    videos_api,
};

#[derive(Clone, Copy)]
enum Route {
    ChatCompletions,
    Completions,
    Embeddings,
    Rerank(Dialect),
    Responses,
    Tgi { stream: bool },
    Messages,
    SolidoRag,
    AudioTranscriptions,
    Images(ImageRoute),
    ImageRetrieval,
    Videos,
    VideoJob,
    Models,
    Health,
    Metrics,
    Control(ControlRoute),
}

impl Route {
    fn of(path: &str) -> Option<Route> {
        match path {
            "/v1/chat/completions" => Some(Route::ChatCompletions),
            "/v1/completions" => Some(Route::Completions),
            "/v1/embeddings" => Some(Route::Embeddings),
            "/v1/rerank" | "/v2/rerank" => Some(Route::Rerank(Dialect::Cohere)),
            "/rerank" => Some(Route::Rerank(Dialect::Tei)),
            "/v1/ranking" => Some(Route::Rerank(Dialect::Nim)),
            "/v1/responses" => Some(Route::Responses),
            "/generate" => Some(Route::Tgi { stream: false }),
            "/generate_stream" => Some(Route::Tgi { stream: true }),
            "/v1/messages" => Some(Route::Messages),
            "/rag/api/prompt" => Some(Route::SolidoRag),
            "/v1/models" => Some(Route::Models),
            "/health" => Some(Route::Health),
            "/metrics" => Some(Route::Metrics),
            "/v1/audio/transcriptions" => Some(Route::AudioTranscriptions),
            "/v1/images/generations" => Some(Route::Images(ImageRoute::Generations)),
            "/v1/images/edits" => Some(Route::Images(ImageRoute::Edits)),
            "/v1/infer" => Some(Route::ImageRetrieval),
            "/v1/videos" => Some(Route::Videos),
            _ if path.starts_with("/v1/videos/") => Some(Route::VideoJob),
            _ => ControlRoute::of(path).map(Route::Control),
        }
    }

    fn method(self) -> Method {
        match self {
            Route::Models | Route::Health | Route::Metrics | Route::VideoJob => Method::GET,
            _ => Method::POST,
        }
    }

    fn needs_key(self) -> bool {
        !matches!(self, Route::Health | Route::Metrics)
    }
}

pub async fn route(state: Arc<MockState>, request: Request<Incoming>) -> Result<Response<MockBody>, Infallible> {
    let path = request.uri().path();
    let Some(route) = Route::of(path) else {
        let message = format!("no route for {} {path}", request.method());
        return Ok(reply::error(StatusCode::NOT_FOUND, "not_found_error", "unknown_url", &message));
    };
    if request.method() != route.method() {
        let allowed = if route.method() == Method::POST { "POST" } else { "GET" };
        return Ok(reply::method_not_allowed(request.method(), path, allowed));
    }
    if route.needs_key() && !state.is_authorized(request.headers()) {
        let message = "missing or wrong API key; send Authorization: Bearer <key> (or x-api-key: <key>)";
        return Ok(reply::error(StatusCode::UNAUTHORIZED, "authentication_error", "invalid_api_key", message));
    }
    Ok(match route {
        Route::ChatCompletions => generate::serve(state, Endpoint::Chat, request).await,
        Route::Completions => generate::serve(state, Endpoint::Completions, request).await,
        Route::Embeddings => embeddings::serve(state, request).await,
        Route::Rerank(dialect) => rerank::serve(state, dialect, request).await,
        Route::Responses => generate::serve(state, Endpoint::Responses, request).await,
        Route::Tgi { stream } => generate::serve(state, Endpoint::Tgi { stream }, request).await,
        Route::Messages => match messages_api::check_version(request.headers()) {
            Ok(()) => generate::serve(state, Endpoint::Messages, request).await,
            Err(message) => reply::invalid_request(&message),
        },
        Route::SolidoRag => {
            let stream = solido_rag::wants_stream(request.headers());
            generate::serve(state, Endpoint::SolidoRag { stream }, request).await
        }
        Route::AudioTranscriptions => audio_api::serve(state, request).await,
        Route::Images(route) => images_api::serve(state, route, request).await,
        Route::ImageRetrieval => image_retrieval::serve(state, request).await,
        Route::Videos => videos_api::create(state, request).await,
        Route::VideoJob => videos_api::job(&state, request.uri().path()),
        Route::Models => info::models(&state),
        Route::Health => info::health(),
        Route::Metrics => info::metrics(&state),
        Route::Control(route) => {
            if route == ControlRoute::ResetPrefixCache {
                state.reset_prefix_cache();
            }
            state.control.serve(route)
        }
    })
}
