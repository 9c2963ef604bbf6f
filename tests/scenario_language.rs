//! The language around the builders: `--set` values read with `args()`/`arg()`, `log` and
//! `fail`, the sandbox's limits, where imports are found, and files relative to the scenario.

mod common;

use std::path::Path;
use std::process::Output;

use common::{aiperf_command, text, write};

/// `aiperf check <dir>/<name>.rhai <extra..>` from `dir`, with `source` as the scenario.
fn check(name: &str, source: &str, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join(format!("{name}.rhai"));
    write(&scenario, source);
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).args(extra).output().expect("run aiperf check");
    (dir, output)
}

#[test]
fn set_values_reach_args_and_arg_typed() {
    let source = r#"
        let a = args();
        print(`users+1=${a.users + 1} model=${a.model} rate*2=${a.rate * 2.0} on=${a.on == true}`);
        print(`arg=${arg("users", 1.5)} default=${arg("turns", 3)} text=${arg("users", "none")}`);
    "#;
    let set = ["--set", "users=64", "--set", "model=llama", "--set", "rate=0.5", "--set", "on=true", "--set", "x=1"];
    let (_dir, output) = check("args", source, &set);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("users+1=65 model=llama rate*2=1.0 on=true"), "{stdout}");
    assert!(stdout.contains("arg=64.0 default=3 text=64"), "{stdout}");
}

#[test]
fn a_set_value_of_the_wrong_type_is_a_script_error_at_the_call() {
    let (_dir, output) = check("badarg", "let x = 1;\nlet users = arg(\"users\", 8);\n", &["--set", "users=lots"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("badarg.rhai:2:13:"), "{stderr}");
    assert!(stderr.contains(r#"--set users="lots" is not an integer like the default `8`"#), "{stderr}");

    let (_dir, output) = check("noequals", "", &["--set", "users"]);
    assert_eq!(output.status.code(), Some(2), "clap's usage error");
    assert!(text(&output.stderr).contains("is not NAME=VALUE"), "{}", text(&output.stderr));
}

#[test]
fn log_tags_the_line_and_fail_stops_with_exit_code_2() {
    let (_dir, output) =
        check("fail", "let n = 3;\nlog(`n is ${n}`);\nfail(`n must be even, got ${n}`);\nlog(\"never\");\n", &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("[log "), "{stderr}");
    assert!(stderr.contains("fail.rhai:2] n is 3\n"), "{stderr}");
    assert!(stderr.contains("fail.rhai:3:1: n must be even, got 3"), "{stderr}");
    assert!(!stderr.contains("never"), "{stderr}");
}

/// Check `source` and expect it to stop with exit code 2, `<name>.rhai:<at>` and `message`.
fn assert_stops(name: &str, source: &str, extra: &[&str], at: &str, message: &str) {
    let (_dir, output) = check(name, source, extra);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{name}.rhai:{at}")), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
}

#[test]
fn a_runaway_loop_stops_with_the_limit_and_its_position() {
    let limit = ["--max-operations", "100000"];
    let message = "the script ran more than 100000 operations; a runaway loop? raise with --max-operations";
    assert_stops("runaway", "let n = 0;\nloop {\n    n += 1;\n}\n", &limit, "3:", message);

    let (_dir, output) = check("bounded", "let n = 0;\nwhile n < 1000 { n += 1; }\n", &limit);
    assert_eq!(output.status.code(), Some(0), "a loop within the limit runs: {}", text(&output.stderr));
}

#[test]
fn a_runaway_recursion_and_a_huge_string_stop_with_clear_errors() {
    let message = "functions called each other more than 64 deep; a runaway recursion?";
    assert_stops("recursion", "fn down(n) {\n    down(n + 1)\n}\ndown(0);\n", &[], "4:1", message);
    let message = "Length of string is over the scenario's limit (strings 16 MiB, arrays 1000000 items";
    assert_stops("huge", "let s = \"x\";\nloop { s += s; }\n", &[], "2:10", message);
}

/// A scenario in `<root>/scenario/` importing `shared`, checked from `root` with `--lib <root>/lib`
/// and AIPERF_PATH=<root>/env; each folder's module, when present, says where it is.
fn import_from(places: &[&str]) -> Output {
    let root = tempfile::tempdir().expect("temp dir");
    for place in places {
        write(&root.path().join(place).join("shared.rhai"), &format!("export const place = \"{place}\";"));
    }
    let scenario = root.path().join("scenario/main.rhai");
    write(&scenario, "import \"shared\" as lib;\nprint(`from ${lib::place}`);\n");
    aiperf_command(root.path())
        .arg("check")
        .arg(&scenario)
        .arg("--lib")
        .arg(root.path().join("lib"))
        .env("AIPERF_PATH", format!("{}:{}", root.path().join("nowhere").display(), root.path().join("env").display()))
        .output()
        .expect("run aiperf check")
}

#[test]
fn imports_look_next_to_the_importer_then_in_lib_then_in_aiperf_path() {
    for (places, found) in
        [(&["scenario", "lib", "env"][..], "scenario"), (&["lib", "env"][..], "lib"), (&["env"][..], "env")]
    {
        let output = import_from(places);
        assert_eq!(output.status.code(), Some(0), "{places:?}: {}", text(&output.stderr));
        assert!(text(&output.stdout).contains(&format!("from {found}\n")), "{places:?}: {}", text(&output.stdout));
    }

    let output = import_from(&[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("main.rhai:1:8: module `shared` not found; looked for "), "{stderr}");
    for searched in ["scenario/shared.rhai", "lib/shared.rhai", "nowhere/shared.rhai", "env/shared.rhai"] {
        assert!(stderr.contains(searched), "{searched} missing: {stderr}");
    }
}

#[test]
fn a_module_imports_relative_to_itself_and_its_errors_name_its_file() {
    let root = tempfile::tempdir().expect("temp dir");
    write(
        &root.path().join("lib/helpers.rhai"),
        "import \"more/inner\" as inner;\nfn check(n) {\n    if n > inner::limit { fail(`${n} is over ${inner::limit}`); }\n}\n",
    );
    write(&root.path().join("lib/more/inner.rhai"), "export const limit = 10;");
    let scenario = root.path().join("main.rhai");
    write(&scenario, "import \"helpers\" as h;\nh::check(5);\nh::check(50);\n");
    let output = aiperf_command(root.path()).arg("check").arg(&scenario).arg("--lib").arg("lib").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("helpers.rhai:3:27: 50 is over 10 (in function `check`)"), "{stderr}");
}

#[test]
fn a_module_is_evaluated_once_however_often_it_is_imported() {
    let root = tempfile::tempdir().expect("temp dir");
    write(&root.path().join("counted.rhai"), "print(\"evaluated\");\nfn twice(n) { n * 2 }\n");
    let scenario = root.path().join("main.rhai");
    let importer = "fn doubled(n) {\n    import \"counted\" as c;\n    c::twice(n)\n}\n";
    write(&scenario, &format!("{importer}print(doubled(1) + doubled(2) + doubled(3));\nimport \"counted\" as top;\n"));
    let output = aiperf_command(root.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert_eq!(stdout.matches("evaluated").count(), 1, "{stdout}");
    assert!(stdout.contains("12\n"), "{stdout}");
}

/// A closure a module made is called from the scenario as from the module: with what it
/// captured, the module's functions and imports, the recursion limit, and its errors naming
/// the module's file.
#[test]
fn a_closure_a_module_made_can_be_called_from_the_scenario() {
    let root = tempfile::tempdir().expect("temp dir");
    write(
        &root.path().join("factory.rhai"),
        "import \"aiperf/sweeps\" as sweeps;\nfn offset() { 100 }\nfn adder(n) { |x| x + n + offset() }\n\
         fn loads(first) { |last| sweeps::doubling(first, last) }\n\
         fn checked() { |x| { if x > 1 { fail(`too big: ${x}`); } x } }\n\
         fn countdown() { |n| if n == 0 { 0 } else { 1 + countdown().call(n - 1) } }\n",
    );
    let scenario = root.path().join("main.rhai");
    let source = "import \"factory\" as f;\nlet add = f::adder(2);\nprint(`add ${add.call(1)}`);\n\
                  print(`loads ${f::loads(1).call(8)}`);\nprint(`down ${f::countdown().call(5)}`);\n\
                  print(`checked ${f::checked().call(1)}`);\n";
    write(&scenario, source);
    let output = aiperf_command(root.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    for line in ["add 103", "loads [1, 2, 4, 8]", "down 5", "checked 1"] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    write(&scenario, &format!("{source}f::checked().call(5);\n"));
    let output = aiperf_command(root.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("factory.rhai:5:33: too big: 5 (in a closure)"), "{stderr}");
    write(&scenario, "import \"factory\" as f;\nf::countdown().call(1000);\n");
    let output = aiperf_command(root.path()).arg("check").arg(&scenario).output().expect("run");
    assert!(text(&output.stderr).contains("a runaway recursion"), "{}", text(&output.stderr));
}

#[test]
fn files_a_scenario_names_are_relative_to_it_from_any_working_directory() {
    let root = tempfile::tempdir().expect("temp dir");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets");
    write(
        &root.path().join("bench/data/prompts.jsonl"),
        &std::fs::read_to_string(fixtures.join("single_turn.jsonl")).expect("fixture"),
    );
    write(&root.path().join("bench/data/trace.jsonl"), "{\"timestamp\": 0}\n{\"timestamp\": 5}\n{\"timestamp\": 10}\n");
    let scenario = root.path().join("bench/paths.rhai");
    write(
        &scenario,
        r#"
        import "aiperf/mock" as mock;
        let r = run(#{
            name: "paths",
            endpoint: endpoint(#{ url: "mock", mock: mock::instant }),
            dataset: file(#{ path: "data/prompts.jsonl" }),
            phases: [schedule(#{ file: "data/trace.jsonl" })],
        });
        print(`REQUESTS=${r.request_count}`);
        "#,
    );
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("create folder");
    let output = aiperf_command(&elsewhere)
        .arg("run")
        .arg(&scenario)
        .args(["--no-progress", "--set", "api_key=sk-hidden"])
        .output()
        .expect("run");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(text(&output.stdout).contains("REQUESTS=3"), "{}", text(&output.stdout));

    let artifacts = elsewhere.join("artifacts/paths");
    assert!(stderr.contains(&format!("run paths → {}\n", artifacts.display())), "{stderr}");
    let dataset_line = format!(
        "  dataset   file {} (single_turn, in file order; more requests than entries start again from the first)\n",
        root.path().join("bench/data/prompts.jsonl").display()
    );
    assert!(stderr.contains(&dataset_line), "{stderr}");
    assert!(stderr.contains("  phase 1   schedule of 3 timestamps, 1× speed\n"), "{stderr}");
    let summary = std::fs::read_to_string(artifacts.join("profile_export_aiperf.json")).expect("summary");
    assert!(summary.contains("--set api_key=<redacted>"), "the command line is recorded, its secret is not");
    assert!(!summary.contains("sk-hidden"));
}

#[test]
fn a_dry_run_shows_ca_files_and_tokenizers_next_to_the_scenario() {
    let root = tempfile::tempdir().expect("temp dir");
    let tokenizer =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
    std::fs::create_dir_all(root.path().join("bench")).expect("create folder");
    std::fs::copy(&tokenizer, root.path().join("bench/tokenizer.json")).expect("copy tokenizer");
    let scenario = root.path().join("bench/tls.rhai");
    write(
        &scenario,
        r#"
        run(#{
            endpoint: endpoint(#{ url: "https://10.0.0.1:8443", tls: #{ ca_file: "certs/ca.pem" } }),
            tokenizer: "tokenizer.json",
            phases: [concurrency(#{ requests: 1 })],
        });
        run(#{ endpoint: endpoint(#{ url: "mock" }), tokenizer: "not/here.json", phases: [concurrency(#{ requests: 1 })] });
        "#,
    );
    let output = aiperf_command(root.path()).arg("run").arg("--dry-run").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let shown = |path: &str| format!("\"{}\"", root.path().join(path).display());
    assert!(stdout.contains(&format!("\"ca_file\": {}", shown("bench/certs/ca.pem"))), "{stdout}");
    assert!(stdout.contains(&format!("\"path\": {}", shown("bench/tokenizer.json"))), "{stdout}");
    assert!(
        stdout.contains("\"path\": \"not/here.json\""),
        "a tokenizer not next to the scenario stays as written: {stdout}"
    );
    assert!(!text(&output.stderr).contains("run tls →"), "a dry run prints no summary");
}
