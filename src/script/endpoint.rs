//! `endpoint(#{..})`: the server(s) a scenario benchmarks, its kind and request options, TLS,
//! connection reuse and the built-in mock's settings.

use std::collections::BTreeMap;

use rhai::{Dynamic, Map};

use super::endpoint_request::{check_template_fills, endpoint_kind, request_options};
use super::endpoint_routing::{models, routing};
use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::MockConfig;
use crate::plan::{
    ConnectionSettings, ConnectionStrategy, Endpoint, EndpointKind, MOCK_URL, ResponseLimits, TlsSettings, Transport,
};

const ENDPOINT_KEYS: &[&str] = &[
    "url",
    "urls",
    "url_strategy",
    "session_headers",
    "session_header",
    "model",
    "model_selection",
    "kind",
    "streaming",
    "api_key",
    "headers",
    "extra",
    "mock",
    "tls",
    "http2",
    "connections",
    "dialect",
    "path",
    "max_tokens_field",
    "passages",
    "body",
    "response",
    "limits",
    "uuid_and_strip",
    "per_chunk_usage",
    "content_parts",
    "download_video_content",
    "video_poll_interval",
    "request_content_type",
];

/// `endpoint(#{ url, model, kind, streaming, api_key, headers, extra, mock, tls, http2,
/// connections, limits })` plus the kind-specific keys of `endpoint_request.rs` and the urls',
/// session headers' and models' keys of `endpoint_routing.rs`.
pub(super) fn endpoint(map: Map) -> ScriptResult<Endpoint> {
    let mut r = MapReader::new("endpoint", map, ENDPOINT_KEYS)?;
    let routing = routing(&mut r)?;
    let url = routing.urls[0].clone();
    let (models, model_selection) = models(&mut r)?;
    let model = models[0].clone();
    let kind = endpoint_kind(&mut r)?;
    let streaming = match r.opt_bool("streaming")? {
        Some(true) if !kind.can_stream() => {
            let kind_name = match kind {
                EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings => "rankings",
                other => other.as_str(),
            };
            return script_error(format!("endpoint: kind \"{kind_name}\" does not stream; drop `streaming: true`"));
        }
        Some(streaming) => streaming,
        None => kind.produces_tokens() && kind != EndpointKind::AudioTranscription,
    };
    let api_key = r.opt_string("api_key")?.filter(|k| !k.is_empty());
    let mut headers = BTreeMap::new();
    for (name, value) in r.opt_map("headers")?.unwrap_or_default() {
        headers.insert(name.to_string(), value.to_string());
    }
    let extra = match r.opt_map("extra")? {
        Some(map) => match rhai::serde::from_dynamic::<serde_json::Map<String, serde_json::Value>>(&Dynamic::from(map))
        {
            Ok(extra) => extra,
            Err(e) => return script_error(format!("endpoint: `extra` cannot be sent as JSON: {e}")),
        },
        None => Default::default(),
    };
    // Mock settings are checked always but used only with the mock, so one scenario can
    // switch between the mock and a real server with an environment variable.
    let mock = mock_config(r.opt_map("mock")?.unwrap_or_default(), &models)?;
    let mock = (url == MOCK_URL).then_some(mock);
    let transport = Transport {
        tls: tls_settings(r.opt_map("tls")?.unwrap_or_default())?,
        http2: r.opt_bool("http2")?.unwrap_or(false),
        connections: connection_settings(r.opt_map("connections")?.unwrap_or_default())?,
    };
    let request = request_options(&mut r, kind)?;
    let limits = response_limits(r.opt_map("limits")?.unwrap_or_default())?;
    if request.template.is_some() && !extra.is_empty() {
        return script_error("endpoint: a template endpoint takes no `extra`; write those fields into `body`");
    }
    let endpoint = Endpoint {
        url,
        more_urls: routing.urls[1..].to_vec(),
        url_strategy: routing.strategy,
        session_headers: routing.session_headers,
        model,
        more_models: models[1..].to_vec(),
        model_selection,
        kind,
        streaming,
        api_key,
        headers,
        extra,
        mock,
        transport,
        request,
        limits,
    };
    check_template_fills(&endpoint)?;
    Ok(endpoint)
}

const TLS_KEYS: &[&str] = &["ca_file", "insecure"];

/// `tls: #{ ca_file: "ca.pem", insecure: false }`
fn tls_settings(map: Map) -> ScriptResult<TlsSettings> {
    let mut r = MapReader::new("endpoint tls", map, TLS_KEYS)?;
    let ca_file = r.opt_string("ca_file")?;
    let insecure = r.opt_bool("insecure")?.unwrap_or(false);
    if insecure && ca_file.is_some() {
        return script_error("endpoint tls: give `ca_file` or `insecure: true`, not both");
    }
    Ok(TlsSettings { ca_file, insecure })
}

const CONNECTION_KEYS: &[&str] = &["strategy", "max", "http2_connections"];

/// `connections: #{ strategy: "pooled"|"never_reuse"|"sticky", max: 8, http2_connections: 4 }`
fn connection_settings(map: Map) -> ScriptResult<ConnectionSettings> {
    let mut r = MapReader::new("endpoint connections", map, CONNECTION_KEYS)?;
    let strategy = r.choice(
        "strategy",
        &[
            ("pooled", ConnectionStrategy::Pooled),
            ("never_reuse", ConnectionStrategy::NeverReuse),
            ("sticky", ConnectionStrategy::Sticky),
        ],
    )?;
    let max = r.opt_u64("max")?;
    if max == Some(0) {
        return script_error("endpoint connections: `max` must be at least 1");
    }
    let http2_connections = r.opt_u64("http2_connections")?;
    if http2_connections == Some(0) {
        return script_error("endpoint connections: `http2_connections` must be at least 1");
    }
    Ok(ConnectionSettings {
        strategy,
        max: max.map(|max| max as usize),
        http2_connections: http2_connections.map(|connections| connections as usize),
    })
}

const LIMIT_KEYS: &[&str] = &["max_event_bytes", "max_response_bytes"];

/// `limits: #{ max_event_bytes: 1048576, max_response_bytes: 67108864 }`
fn response_limits(map: Map) -> ScriptResult<ResponseLimits> {
    let mut r = MapReader::new("endpoint limits", map, LIMIT_KEYS)?;
    let defaults = ResponseLimits::default();
    let max_event_bytes = r.opt_u64("max_event_bytes")?.map_or(defaults.max_event_bytes, |n| n as usize);
    let max_response_bytes = r.opt_u64("max_response_bytes")?.map_or(defaults.max_response_bytes, |n| n as usize);
    if max_event_bytes == 0 || max_response_bytes == 0 {
        return script_error("endpoint limits: `max_event_bytes` and `max_response_bytes` must be at least 1");
    }
    Ok(ResponseLimits { max_event_bytes, max_response_bytes })
}

const MOCK_KEYS: &[&str] = &[
    "ttft",
    "itl",
    "output_tokens",
    "max_running",
    "api_key",
    "prefill_per_token",
    "prefix_cache_blocks",
    "prefix_block_tokens",
    "spec_decode_tokens",
    "spec_decode_acceptance",
    "accuracy_correct",
    "stream_interval",
    "tokenizer",
];

/// `mock: #{ ttft: ms(20), itl: ms(5), output_tokens: 64, max_running: 256, api_key,
/// prefill_per_token: ms(0.05), prefix_cache_blocks: 16384, prefix_block_tokens: 16,
/// spec_decode_tokens: 3, spec_decode_acceptance: 0.7, stream_interval: 1, tokenizer: "o200k_base" }`
fn mock_config(map: Map, models: &[String]) -> ScriptResult<MockConfig> {
    let mut r = MapReader::new("endpoint mock", map, MOCK_KEYS)?;
    let defaults = MockConfig::default();
    let ttft_ms = r.opt_f64("ttft")?.map(|s| s * 1000.0).unwrap_or(defaults.ttft_ms);
    let itl_ms = r.opt_f64("itl")?.map(|s| s * 1000.0).unwrap_or(defaults.itl_ms);
    if ttft_ms < 0.0 || itl_ms < 0.0 {
        return script_error("endpoint mock: `ttft` and `itl` cannot be negative");
    }
    let default_output_tokens = r.opt_u64("output_tokens")?.unwrap_or(defaults.default_output_tokens);
    let max_running = r.opt_u64("max_running")?.map(|n| n.max(1) as usize).unwrap_or(defaults.max_running);
    let api_key = r.opt_string("api_key")?;
    let prefill_ms_per_token = r.opt_f64("prefill_per_token")?.map_or(defaults.prefill_ms_per_token, |s| s * 1000.0);
    let spec_decode_acceptance = r.opt_f64("spec_decode_acceptance")?.unwrap_or(defaults.spec_decode_acceptance);
    if prefill_ms_per_token < 0.0 || !(0.0..=1.0).contains(&spec_decode_acceptance) {
        return script_error(
            "endpoint mock: `prefill_per_token` cannot be negative and `spec_decode_acceptance` must be between 0 and 1",
        );
    }
    let spec_decode_tokens = match r.opt_u64("spec_decode_tokens")? {
        None => defaults.spec_decode_tokens,
        Some(tokens) => match u32::try_from(tokens) {
            Ok(tokens) => tokens,
            Err(_) => return script_error(format!("endpoint mock: `spec_decode_tokens` {tokens} is too large")),
        },
    };
    Ok(MockConfig {
        ttft_ms,
        itl_ms,
        default_output_tokens,
        max_running,
        models: models.to_vec(),
        api_key,
        prefill_ms_per_token,
        prefix_cache_blocks: r.opt_u64("prefix_cache_blocks")?.unwrap_or(defaults.prefix_cache_blocks),
        prefix_block_tokens: r.opt_u64("prefix_block_tokens")?.unwrap_or(defaults.prefix_block_tokens),
        spec_decode_tokens,
        spec_decode_acceptance,
        answers: r.opt_f64("accuracy_correct")?.map(|correct| crate::plan::MockAnswers { correct, benchmark: None }),
        http2_max_streams: None,
        tokenizer: r.opt_string("tokenizer")?,
        stream_interval: match r.opt_u64("stream_interval")? {
            None => defaults.stream_interval,
            Some(0) => return script_error("endpoint mock: `stream_interval` must be at least 1 token"),
            Some(tokens) => tokens,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mock_settings_take_the_prefix_cache_and_speculative_decoding() {
        let mut map = Map::new();
        map.insert("prefill_per_token".into(), Dynamic::from(0.000_05_f64));
        map.insert("prefix_cache_blocks".into(), Dynamic::from(64_i64));
        map.insert("prefix_block_tokens".into(), Dynamic::from(32_i64));
        map.insert("spec_decode_tokens".into(), Dynamic::from(3_i64));
        map.insert("spec_decode_acceptance".into(), Dynamic::from(0.6_f64));
        map.insert("tokenizer".into(), Dynamic::from("o200k_base".to_string()));
        let config = mock_config(map, &["m".to_string()]).unwrap();
        assert_eq!(config.tokenizer.as_deref(), Some("o200k_base"));
        assert!((config.prefill_ms_per_token - 0.05).abs() < 1e-12, "{}", config.prefill_ms_per_token);
        assert_eq!((config.prefix_cache_blocks, config.prefix_block_tokens, config.spec_decode_tokens), (64, 32, 3));
        assert_eq!(config.spec_decode_acceptance, 0.6);
        let mut bad = Map::new();
        bad.insert("spec_decode_acceptance".into(), Dynamic::from(1.5_f64));
        let error = mock_config(bad, &["m".to_string()]).unwrap_err().to_string();
        assert!(error.contains("spec_decode_acceptance"), "{error}");
    }
}
