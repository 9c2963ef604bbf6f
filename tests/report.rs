//! The HTML report and the static images (`aiperf plot`, `report: true`): a real run against
//! the built-in mock, its report loaded in headless Chromium (Debian's `chromium`, installed
//! by scripts/real-servers.sh), and the PNG/SVG files read back.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{aiperf_command, run_scenario};

/// A run with errors (requests queued at the mock past a short timeout), SLOs, thresholds,
/// per-scrape server metrics, warmup, and `report: true`.
const RUN_WITH_REPORT: &str = r#"
import "aiperf/slos" as slos;
let target = endpoint(#{
    url: "mock",
    model: "mock-model",
    mock: #{ ttft: ms(20), itl: ms(4), max_running: 4 },
});
run(#{
    name: "reported",
    endpoint: target,
    dataset: synthetic(#{ isl: normal(64, 8), osl: fixed(32), seed: 7 }),
    phases: [
        warmup(#{ requests: 4, concurrency: 2 }),
        concurrency(#{ users: 12, requests: 120 }),
    ],
    request_timeout: ms(300),
    slos: slos::interactive_chat(),
    thresholds: ["request_latency.p99 < 60000"],
    server_metrics: #{ formats: ["json", "jsonl"] },
    report: true,
});
"#;

fn chromium() -> &'static str {
    let found = Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(found, "chromium is not installed: run scripts/real-servers.sh (apt-get install -y chromium)");
    "chromium"
}

/// Chromium on `page` with `extra` arguments; its console goes to stderr.
fn headless(page: &Path, profile: &Path, extra: &[String]) -> Output {
    Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("start chromium")
}

/// The page's DOM after its script ran; fails on a console error or a script error.
fn dom_after_scripts(page: &Path, scratch: &Path) -> String {
    let output = headless(page, &scratch.join("profile-dom"), &["--dump-dom".to_string()]);
    let dom = String::from_utf8_lossy(&output.stdout).to_string();
    let console = String::from_utf8_lossy(&output.stderr).to_string();
    let console_errors: Vec<&str> =
        console.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).collect();
    assert!(console_errors.is_empty(), "console errors: {console_errors:#?}");
    let script_errors = dom.split("data-js-errors=\"").nth(1).map(|rest| rest.split('"').next().unwrap_or_default());
    assert_eq!(script_errors, None, "the page's script failed");
    dom
}

/// Each `<figure class="panel" …>…</figure>` of the DOM: (chart id, its markup).
fn figures(dom: &str) -> Vec<(String, String)> {
    dom.split("<figure class=\"panel\" data-chart=\"")
        .skip(1)
        .map(|part| {
            let (id, rest) = part.split_once('"').expect("a chart id");
            let body = rest.split("</figure>").next().unwrap_or_default();
            (id.to_string(), body.to_string())
        })
        .collect()
}

/// Every chart is in the DOM as an SVG with something drawn and hoverable in it; the
/// page's script marked itself ready with that many charts.
fn assert_every_chart_drawn(dom: &str) -> Vec<String> {
    let charts = figures(dom);
    assert!(!charts.is_empty(), "no chart in the page");
    for (id, body) in &charts {
        assert!(body.contains(&format!("id=\"chart-{id}\"")), "figure {id} holds no chart SVG");
        assert!(body.matches("data-tip=").count() >= 1, "chart {id} draws nothing");
    }
    assert!(dom.contains(&format!("data-ready=\"{}\"", charts.len())), "the script did not run over every chart");
    charts.into_iter().map(|(id, _)| id).collect()
}

fn decode_png(path: &Path) -> resvg::tiny_skia::Pixmap {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()))
}

/// Not one flat colour: something was drawn.
fn has_drawing(pixmap: &resvg::tiny_skia::Pixmap) -> bool {
    let first = pixmap.pixels()[0];
    pixmap.pixels().iter().filter(|p| **p != first).count() > 1000
}

#[test]
fn a_runs_report_opens_in_headless_chromium_with_every_chart_drawn() {
    let run = run_scenario("reported", RUN_WITH_REPORT);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    let page = run.artifacts("reported").join("report.html");
    assert!(run.stdout().contains(&format!("report: {}", page.display())), "{}", run.stdout());
    let html = std::fs::read_to_string(&page).expect("report.html");
    for external in ["http://", "https://", "src=\"", "<link"] {
        let outside = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!outside.contains(external), "the page loads something from outside: {external}");
    }
    let summary = run.summary("reported");
    let errors: f64 = summary["error_summary"].as_array().unwrap().iter().map(|e| e["count"].as_f64().unwrap()).sum();
    assert!(errors > 0.0, "the run was meant to have timeouts");

    let dom = dom_after_scripts(&page, run.dir.path());
    let ids = assert_every_chart_drawn(&dom);
    for wanted in [
        "ttft-histogram",
        "ttft-cdf",
        "itl-histogram",
        "latency-cdf",
        "isl-histogram",
        "osl-cdf",
        "ttft-over-time",
        "latency-over-time",
        "in-flight",
        "request-throughput",
        "token-throughput",
        "errors-over-time",
        "http-trace",
        "server-vllm-num-requests-running",
        "server-vllm-time-to-first-token-seconds",
    ] {
        assert!(ids.iter().any(|id| id == wanted), "no chart {wanted} in {ids:?}");
    }
    // Phase boundaries are marked on the charts over time.
    assert!(dom.contains("class=\"mark\"") && dom.contains(">warmup</text>"));
    for card in ["requests/s", "TTFT", "errors", "goodput", "thresholds", "client self-check"] {
        assert!(dom.contains(&format!("<div class=\"label\">{card}</div>")), "no {card} card");
    }

    // Dragging across a chart over time zooms its x axis: the plot is stretched and the ticks
    // are redrawn for the narrower range.
    let probe = r#"<script>
var svg = document.getElementById('chart-latency-over-time');
var box = svg.getBoundingClientRect();
function mouse(type, x) {
  svg.dispatchEvent(new MouseEvent(type, { clientX: box.left + x * box.width / 720, clientY: box.top + 150, bubbles: true }));
}
mouse('mousedown', 200); mouse('mousemove', 400); mouse('mouseup', 400);
var ticks = Array.from(svg.querySelectorAll('g.xticks text')).map(function (t) { return t.textContent; });
document.body.setAttribute('data-zoom', svg.querySelector('g.plot').getAttribute('transform') + '|' + ticks.join(','));
</script></body>"#;
    let before = figures(&dom).into_iter().find(|(id, _)| id == "latency-over-time").unwrap().1;
    let zoom_page = run.dir.path().join("zoom.html");
    std::fs::write(&zoom_page, html.replace("</body>", probe)).unwrap();
    let zoomed = dom_after_scripts(&zoom_page, &run.dir.path().join("zoom"));
    let zoom = zoomed.split("data-zoom=\"").nth(1).and_then(|rest| rest.split('"').next()).expect("the probe ran");
    let (transform, ticks) = zoom.split_once('|').unwrap();
    assert!(transform.starts_with("translate(") && transform.contains("scale("), "{zoom}");
    let scale: f64 = transform.split("scale(").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(scale > 2.0, "a third of the width zoomed about 3x: {zoom}");
    let first_tick = before.split("class=\"xticks\"").nth(1).unwrap().split("</text>").next().unwrap();
    assert!(!ticks.is_empty() && !first_tick.ends_with(&format!(">{}", ticks.split(',').next().unwrap())), "{zoom}");

    let screenshot = run.dir.path().join("report.png");
    let shot = headless(
        &page,
        &run.dir.path().join("profile-shot"),
        &["--window-size=1400,2400".to_string(), format!("--screenshot={}", screenshot.display())],
    );
    assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
    let pixmap = decode_png(&screenshot);
    assert_eq!((pixmap.width(), pixmap.height()), (1400, 2400));
    assert!(has_drawing(&pixmap), "the screenshot is blank");
}

fn plot(args: &[&str], dir: &Path) -> Output {
    aiperf_command(dir).arg("plot").args(args).output().expect("run aiperf plot")
}

#[test]
fn plot_writes_a_png_and_an_svg_of_every_chart() {
    let run = run_scenario("images", &RUN_WITH_REPORT.replace("report: true", "report: false"));
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let run_dir = run.artifacts("reported");
    assert!(!run_dir.join("report.html").exists(), "report: false writes no report");
    let out = run.dir.path().join("out");
    let output = plot(
        &[run_dir.to_str().unwrap(), "--output", out.to_str().unwrap(), "--format", "html,png,svg"],
        run.dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let ids: Vec<String> = figures(&html).into_iter().map(|(id, _)| id).collect();
    assert!(ids.len() >= 12, "{ids:?}");
    for id in &ids {
        let svg = std::fs::read_to_string(out.join(format!("{id}.svg"))).expect("an SVG per chart");
        let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default())
            .unwrap_or_else(|e| panic!("{id}.svg does not parse: {e}"));
        assert!(tree.root().has_children(), "{id}.svg is empty");
        let png = decode_png(&out.join(format!("{id}.png")));
        assert!(png.width() >= 720 && has_drawing(&png), "{id}.png is blank");
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1 + 2 * ids.len(), "report.html, then one SVG and one PNG per chart");

    // AIPerf's defaults and flags: no folder is ./artifacts; --theme dark; --dashboard serves it.
    let output = plot(&["--format", "svg", "--theme", "dark"], run.dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let dark = std::fs::read_to_string(run.dir.path().join(format!("artifacts/plots/{}.svg", ids[0]))).expect("svg");
    assert!(dark.contains(r##"fill="#1e1f24""##) && !dark.contains(r##"fill="#ffffff""##), "a dark chart: {dark}");
    let (page, missing) = dashboard_pages(&run_dir, run.dir.path());
    let status = |answer: &str| answer.lines().next().unwrap_or_default().split(' ').nth(1).map(str::to_string);
    assert_eq!(status(&page).as_deref(), Some("200"), "{}", &page[..300.min(page.len())]);
    assert!(page.contains("<body class=\"dark\">"), "{}", &page[..300.min(page.len())]);
    assert_eq!(status(&missing).as_deref(), Some("404"), "{missing}");
}

/// `aiperf plot DIR --dashboard --theme dark` on a free port: its page and a path outside its
/// folder, as fetched; it must stop on Ctrl-C with exit code 0.
fn dashboard_pages(run_dir: &Path, scratch: &Path) -> (String, String) {
    use std::io::{BufRead, Read, Write};
    let mut child = aiperf_command(scratch)
        .arg("plot")
        .arg(run_dir)
        .args(["--dashboard", "--port", "0", "--theme", "dark", "--output"])
        .arg(scratch.join("served"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("aiperf plot --dashboard");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("dashboard: http://").map(|rest| rest.split('/').next().unwrap_or("").to_string())
        })
        .expect("the dashboard's address");
    let fetch = |path: &str| {
        let mut stream = std::net::TcpStream::connect(&url).expect("connect");
        write!(stream, "GET {path} HTTP/1.0\r\nHost: {url}\r\n\r\n").expect("request");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("answer");
        answer
    };
    let pages = (fetch("/"), fetch("/../profile_export_aiperf.json"));
    // SAFETY: signals the child this test started; no memory is touched.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    assert_eq!(child.wait().expect("wait").code(), Some(0), "Ctrl-C stops the dashboard");
    pages
}

/// Where two pages first differ, with some text around it.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let around = |text: &str| text.get(at.saturating_sub(200)..(at + 200).min(text.len())).unwrap_or("").to_string();
    format!("at byte {at}:\n{}\n---\n{}", around(a), around(b))
}

#[test]
fn a_runs_report_from_its_live_records_is_the_page_plot_draws_from_its_files() {
    let run = run_scenario("live", RUN_WITH_REPORT);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let run_dir = run.artifacts("reported");
    let live = std::fs::read_to_string(run_dir.join("report.html")).expect("the run's report.html");
    let out = run.dir.path().join("replotted");
    let output = plot(&[run_dir.to_str().unwrap(), "--output", out.to_str().unwrap()], run.dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let replotted = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let ids: Vec<String> = figures(&live).into_iter().map(|(id, _)| id).collect();
    assert!(ids.iter().any(|id| id == "errors-over-time") && ids.iter().any(|id| id == "in-flight"), "{ids:?}");
    assert!(live == replotted, "the pages differ {}", first_difference(&live, &replotted));

    // A run that keeps no record files still draws its requests: they were collected as it ran.
    let summary_only = RUN_WITH_REPORT.replace("report: true,", "report: true, export_level: \"summary\",");
    let run = run_scenario("summary_only", &summary_only);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let run_dir = run.artifacts("reported");
    assert!(!run_dir.join("profile_export.jsonl").exists());
    let live = std::fs::read_to_string(run_dir.join("report.html")).expect("the run's report.html");
    let ids: Vec<String> = figures(&live).into_iter().map(|(id, _)| id).collect();
    assert!(ids.iter().any(|id| id == "ttft-histogram") && ids.iter().any(|id| id == "in-flight"), "{ids:?}");
}

#[test]
fn the_sweep_scenarios_report_shows_the_pareto_charts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = aiperf_command(dir.path())
        .current_dir(root)
        .arg("run")
        .arg("scenarios/report_sweep.rhai")
        .arg("--no-progress")
        .env_remove("AIPERF_URL")
        .env("AIPERF_REQUESTS_PER_USER", "3")
        .output()
        .expect("run the sweep");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let page = dir.path().join("artifacts/report_sweep/report.html");
    let dom = dom_after_scripts(&page, dir.path());
    let ids = assert_every_chart_drawn(&dom);
    for wanted in ["pareto-throughput-latency", "pareto-user-vs-total", "latency-vs-load", "throughput-vs-load"] {
        assert!(ids.iter().any(|id| id == wanted), "no chart {wanted} in {ids:?}");
    }
    let (_, pareto) = figures(&dom).into_iter().find(|(id, _)| id == "pareto-throughput-latency").unwrap();
    assert!(pareto.matches("data-tip=\"runs:").count() == 5, "one point per load: {pareto:.3000}");
    assert!(pareto.contains("data-tip=\"Pareto front:"), "the front is drawn");
    // The comparison table has every run, in load order, with changes against the first.
    let table = dom.split("<table class=\"compare\">").nth(1).expect("a comparison table");
    let header = table.split("</thead>").next().unwrap();
    let order: Vec<usize> = ["users_1", "users_2", "users_4", "users_8", "users_16"]
        .iter()
        .map(|label| header.find(&format!(">{label}<")).expect(label))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "runs out of order: {header}");
    assert!(table.contains("class=\"better\"") || table.contains("class=\"worse\""));
    // The run folders alone plot the same comparison.
    let again = plot(&["artifacts/report_sweep/users_1", "artifacts/report_sweep/users_16"], dir.path());
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
    let compared =
        std::fs::read_to_string(dir.path().join("artifacts/report_sweep/users_1/plots/report.html")).unwrap();
    assert!(compared.contains("id=\"chart-pareto-user-vs-total\"") && compared.contains("<table class=\"compare\">"));
}

#[test]
fn plot_names_a_folder_without_runs_and_a_bad_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = plot(&[empty.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no run found in") && stderr.contains("empty"), "{stderr}");
    let output = plot(&[empty.to_str().unwrap(), "--format", "pdf"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown format `pdf`"));
}

/// Appended to a report: opens every folded section, then measures every tick and category
/// label's box and writes onto the body the pairs that overlap (`data-overlaps`) and how many
/// labels were measured (`data-labels`).
const OVERLAP_CHECK: &str = r#"<script>
document.querySelectorAll('details').forEach(function (d) { d.open = true; });
var overlaps = [], measured = 0;
document.querySelectorAll('svg.chart').forEach(function (svg) {
  var boxes = Array.from(svg.querySelectorAll('text.tick, text.category')).map(function (t) {
    return { text: t.textContent, box: t.getBoundingClientRect() };
  }).filter(function (b) { return b.box.width > 0; });
  measured += boxes.length;
  for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
    var a = boxes[i].box, b = boxes[j].box;
    var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 0.5 && h > 0.5) overlaps.push(svg.id + ': ' + boxes[i].text + ' / ' + boxes[j].text);
  }
});
document.body.setAttribute('data-overlaps', overlaps.join(' | '));
document.body.setAttribute('data-labels', measured);
</script></body>"#;

#[test]
fn a_two_parameter_sweep_with_trials_reads_at_a_glance() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 2 rates × 3 input lengths, 2 trials each: 12 runs.
    let output = aiperf_command(dir.path())
        .args(["profile", "--model", "mock-model", "--url", "mock", "--endpoint-type", "chat", "--streaming"])
        .args(["--request-rate", "20,40", "--isl", "32,64,128", "--osl", "8", "--request-count", "10"])
        .args(["--num-profile-runs", "2", "--artifact-dir", "sweep", "--ui-type", "none"])
        .output()
        .expect("aiperf profile");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let plotted = plot(&["sweep", "-o", "plots"], dir.path());
    assert_eq!(plotted.status.code(), Some(0), "{}", String::from_utf8_lossy(&plotted.stderr));
    let report = std::fs::read_to_string(dir.path().join("plots/report.html")).expect("report.html");
    let checked = dir.path().join("plots/checked.html");
    std::fs::write(&checked, report.replacen("</body>", OVERLAP_CHECK, 1)).unwrap();
    let dom = dom_after_scripts(&checked, dir.path());
    assert_every_chart_drawn(&dom);
    // The table: one column per variation (6), not per trial (12).
    let table = dom.split("<table class=\"compare\">").nth(1).expect("a comparison table");
    let header = table.split("</thead>").next().unwrap();
    assert_eq!(header.matches("<th>").count(), 1 + 6, "{header}");
    assert_eq!(header.matches("(2 trials)").count(), 6, "{header}");
    // Latency against the input length: one line per rate, three points each, with error bars.
    let (_, latency) = figures(&dom).into_iter().find(|(id, _)| id == "latency-vs-load").expect("latency-vs-load");
    assert!(latency.contains("one line per rate"), "{latency:.400}");
    let lines: Vec<&str> = latency.split("class=\"line\" data-series=\"").skip(1).collect();
    let names: Vec<&str> = lines.iter().map(|l| l.split('"').next().unwrap()).collect();
    assert_eq!(names, ["rate 20", "rate 40"], "one line per rate");
    for line in &lines {
        let d = line.split("d=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(d.matches('L').count(), 2, "three input lengths per line: {d}");
    }
    assert!(latency.contains("class=\"error-bars\""), "the trials' confidence intervals are drawn");
    // The Pareto chart: one point per variation.
    let (_, pareto) = figures(&dom).into_iter().find(|(id, _)| id == "pareto-throughput-latency").unwrap();
    assert_eq!(pareto.matches("data-tip=\"runs:").count(), 6, "one point per variation");
    // No two tick or category labels overlap anywhere on the page.
    let overlaps = dom.split("data-overlaps=\"").nth(1).and_then(|rest| rest.split('"').next()).expect("the check ran");
    assert_eq!(overlaps, "", "overlapping labels");
    let measured: usize =
        dom.split("data-labels=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap().parse().unwrap();
    assert!(measured > 100, "the labels were measured: {measured}");
}

/// A capacity search on the mock (8 slots: TTFT p95 breaks 200 ms past 24 users).
const SEARCH: &str = r#"
import "aiperf/search" as search;
let target = endpoint(#{ url: "mock", model: "mock-model", mock: #{ ttft: ms(20), itl: ms(2), max_running: 8 } });
search::max_concurrency_under_sla(#{ ttft_sla_ms: 200, concurrency_max: 48, name: "capacity" }, |point| #{
    endpoint: target,
    dataset: synthetic(#{ isl: fixed(32), osl: fixed(32), seed: 1 }),
    phases: [concurrency(#{ users: point["phases.profiling.concurrency"], requests: 48 })],
});
"#;

#[test]
fn a_searchs_report_charts_every_iteration_feasible_or_not() {
    let run = run_scenario("search", SEARCH);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout(), run.stderr());
    let search_dir = run.artifacts("capacity");
    let history = common::read_json(&search_dir.join("search_history.json"));
    let iterations = history["iterations"].as_array().expect("iterations");
    let feasible = iterations.iter().filter(|it| it["feasible"] == true).count();
    assert!(feasible > 0 && feasible < iterations.len(), "{iterations:?}");
    let boundary = history["boundary_summary"]["feasible_max"]["value"].as_i64().expect("a boundary");

    let out = run.dir.path().join("out");
    let output = plot(&[search_dir.to_str().unwrap(), "--output", out.to_str().unwrap()], run.dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let page = out.join("report.html");
    let dom = dom_after_scripts(&page, run.dir.path());
    let ids = assert_every_chart_drawn(&dom);
    assert!(ids.starts_with(&["search-objective".to_string(), "search-sla".to_string()]), "{ids:?}");
    let charts = figures(&dom);
    let (_, sla_chart) = charts.iter().find(|(id, _)| id == "search-sla").expect("the SLA chart");
    assert_eq!(sla_chart.matches("data-tip=\"feasible #").count(), feasible, "one point per feasible iteration");
    assert_eq!(sla_chart.matches("data-tip=\"infeasible #").count(), iterations.len() - feasible);
    assert!(sla_chart.contains("class=\"points\" data-series=\"feasible\""), "{sla_chart}");
    assert!(sla_chart.contains("class=\"points\" data-series=\"infeasible\""), "{sla_chart}");
    for number in 1..=iterations.len() {
        assert!(sla_chart.contains(&format!("feasible #{number}:")), "iteration {number} has no point");
    }
    assert!(sla_chart.contains("data-series=\"SLA 200\""), "the threshold line");
    assert!(sla_chart.contains(&format!("feasible max {boundary}")), "the boundary mark");
}
