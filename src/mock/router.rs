//! Sends each request to its handler: 404 for unknown paths, 405 for a wrong method, 401
//! for `/v1/*` without the configured key.

use std::convert::Infallible;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use super::body::MockBody;
use super::openai::Endpoint;
use super::state::MockState;
use super::{generate, info, reply};

#[derive(Clone, Copy)]
enum Route {
    ChatCompletions,
    Completions,
    Models,
    Health,
    Metrics,
}

impl Route {
    fn of(path: &str) -> Option<Route> {
        match path {
            "/v1/chat/completions" => Some(Route::ChatCompletions),
            "/v1/completions" => Some(Route::Completions),
            "/v1/models" => Some(Route::Models),
            "/health" => Some(Route::Health),
            "/metrics" => Some(Route::Metrics),
            _ => None,
        }
    }

    fn method(self) -> Method {
        match self {
            Route::ChatCompletions | Route::Completions => Method::POST,
            Route::Models | Route::Health | Route::Metrics => Method::GET,
        }
    }

    fn needs_key(self) -> bool {
        matches!(self, Route::ChatCompletions | Route::Completions | Route::Models)
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
        let message = "missing or wrong API key; send Authorization: Bearer <key>";
        return Ok(reply::error(StatusCode::UNAUTHORIZED, "authentication_error", "invalid_api_key", message));
    }
    Ok(match route {
        Route::ChatCompletions => generate::serve(state, Endpoint::Chat, request).await,
        Route::Completions => generate::serve(state, Endpoint::Completions, request).await,
        Route::Models => info::models(&state),
        Route::Health => info::health(),
        Route::Metrics => info::metrics(&state),
    })
}
