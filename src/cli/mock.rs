//! `aiperf mock`: serve the built-in mock server until Ctrl-C.

use std::net::{SocketAddr, ToSocketAddrs};

use super::{MockArgs, exit_code};
use crate::mock::MockServer;
use crate::plan::{AccuracySpec, MockAnswers, MockConfig};

pub fn serve(args: MockArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let addr: SocketAddr = match (args.host.as_str(), args.port).to_socket_addrs().ok().and_then(|mut a| a.next()) {
        Some(addr) => addr,
        None => {
            eprintln!("error: cannot resolve --host {}", args.host);
            return exit_code::FAILURE;
        }
    };
    let config = MockConfig {
        ttft_ms: args.ttft_ms.max(0.0),
        itl_ms: args.itl_ms.max(0.0),
        default_output_tokens: args.output_tokens,
        max_running: args.max_running.max(1),
        models: vec![args.model],
        api_key: args.api_key,
        prefill_ms_per_token: args.prefill_ms_per_token,
        prefix_cache_blocks: args.prefix_cache_blocks,
        prefix_block_tokens: args.prefix_block_tokens,
        spec_decode_tokens: args.spec_decode_tokens,
        spec_decode_acceptance: args.spec_decode_acceptance,
        answers: args.accuracy_correct.map(|correct| MockAnswers {
            correct,
            benchmark: args.accuracy_benchmark.map(|benchmark| AccuracySpec {
                benchmark,
                tasks: args.accuracy_tasks,
                n_shots: args.accuracy_n_shots,
                cot: args.accuracy_enable_cot,
                grader: args.accuracy_grader,
                ..AccuracySpec::default()
            }),
        }),
        http2_max_streams: args.http2_max_streams,
        tokenizer: args.tokenizer,
        stream_interval: args.stream_interval,
    };
    runtime.block_on(async move {
        let server = match MockServer::start(config, addr).await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("error: cannot start the mock server on {addr}: {e:#}");
                return exit_code::FAILURE;
            }
        };
        eprintln!(
            "mock server listening on {} (chat: {0}/v1/chat/completions, metrics: {0}/metrics); Ctrl-C stops it",
            server.base_url()
        );
        if let Err(e) = tokio::signal::ctrl_c().await {
            eprintln!("error: cannot wait for Ctrl-C: {e}");
        }
        server.shutdown().await;
        exit_code::OK
    })
}
