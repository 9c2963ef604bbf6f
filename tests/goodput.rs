//! Goodput against the built-in mock: SLOs in the plan give good_request_count, goodput and
//! good_request_fraction; without SLOs there are none.

mod common;

use common::{run_scenario, stat};

#[test]
fn slos_count_good_requests_against_the_mock() {
    let run = run_scenario(
        "slo",
        r#"
        let target = endpoint(#{ url: "mock", mock: #{ ttft: ms(20), itl: ms(2) } });
        let phases = [ concurrency(#{ users: 2, requests: 12 }) ];
        let loose = run(#{ name: "loose", endpoint: target, dataset: synthetic(#{ isl: 20, osl: 4 }), phases: phases,
            slos: #{ time_to_first_token: seconds(2), inter_token_latency: ms(500), request_latency: seconds(5) } });
        print(`GOODPUT ${loose.goodput} THROUGHPUT ${loose.throughput}`);
        let strict = run(#{ name: "strict", endpoint: target, dataset: synthetic(#{ isl: 20, osl: 4 }), phases: phases,
            slos: #{ time_to_first_token: ms(1) } });
        print(`STRICT ${strict.goodput}`);
        let none = run(#{ name: "none", endpoint: target, dataset: synthetic(#{ isl: 20, osl: 4 }), phases: phases });
        print(`NONE ${none.goodput == ()}`);
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let loose = run.summary("loose");
    assert_eq!(stat(&loose, "good_request_count", "avg"), 12.0);
    assert_eq!(stat(&loose, "good_request_fraction", "avg"), 1.0);
    assert_eq!(loose["goodput"]["unit"], "requests/sec");
    let goodput = stat(&loose, "goodput", "avg");
    assert!((goodput - 12.0 / stat(&loose, "benchmark_duration", "avg")).abs() < 1e-9);
    assert!((goodput - stat(&loose, "request_throughput", "avg")).abs() < 1e-9);
    assert_eq!(loose["input_config"]["slos"]["time_to_first_token"], 2000.0);
    assert_eq!(loose["input_config"]["slos"]["inter_token_latency"], 500.0);
    assert_eq!(loose["input_config"]["slos"]["request_latency"], 5000.0);
    assert!(run.stdout().contains(&format!("GOODPUT {goodput} ")), "stdout: {}", run.stdout());

    // The mock's TTFT is 20 ms, so no request meets 1 ms.
    let strict = run.summary("strict");
    assert_eq!(stat(&strict, "good_request_count", "avg"), 0.0);
    assert_eq!(stat(&strict, "goodput", "avg"), 0.0);
    assert!(run.stdout().contains("STRICT 0.0"), "stdout: {}", run.stdout());

    let none = run.summary("none");
    assert!(none.get("goodput").is_none() && none.get("good_request_count").is_none());
    assert!(none["input_config"]["slos"].as_object().is_some_and(|slos| slos.is_empty()));
    assert!(run.stdout().contains("NONE true"), "stdout: {}", run.stdout());
}

#[test]
fn an_unknown_slo_metric_is_a_script_error_with_a_suggestion() {
    let run = run_scenario(
        "badslo",
        "run(#{ endpoint: endpoint(#{ url: \"mock\" }), phases: [concurrency(#{ requests: 1 })],\n  slos: #{ time_to_frist_token: ms(200) } });",
    );
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("badslo.rhai:1:1"), "stderr: {}", run.stderr());
    assert!(run.stderr().contains("did you mean `time_to_first_token`?"), "stderr: {}", run.stderr());
}
