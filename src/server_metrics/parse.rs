//! A tolerant Prometheus text / OpenMetrics parser: one bad line is counted and skipped,
//! never a failed scrape. Strict where it matters: names, label escapes, numbers.

use std::collections::HashMap;

/// The type a family declared with `# TYPE` (or `Unknown` without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FamilyKind {
    Gauge,
    Counter,
    Histogram,
    /// `untyped`, `unknown`, or no `# TYPE` line: treated like a gauge.
    Unknown,
    /// Parsed so its `_sum`/`_count` lines are not mistaken for other metrics, then dropped.
    Summary,
}

impl FamilyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyKind::Gauge => "gauge",
            FamilyKind::Counter => "counter",
            FamilyKind::Histogram => "histogram",
            FamilyKind::Unknown => "unknown",
            FamilyKind::Summary => "summary",
        }
    }

    fn from_type_word(word: &str) -> Option<Self> {
        match word {
            "gauge" => Some(FamilyKind::Gauge),
            "counter" => Some(FamilyKind::Counter),
            "histogram" | "gaugehistogram" => Some(FamilyKind::Histogram),
            "untyped" | "unknown" | "info" | "stateset" => Some(FamilyKind::Unknown),
            "summary" => Some(FamilyKind::Summary),
            _ => None,
        }
    }
}

/// Label pairs sorted by name (the identity of a series within a family).
pub type Labels = Vec<(String, String)>;

/// Cumulative histogram state of one series at one scrape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistogramValue {
    /// `(le as written, le as a number, cumulative count)`, sorted by bound; `+Inf` last.
    pub buckets: Vec<(String, f64, f64)>,
    pub sum: f64,
    pub count: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SeriesValue {
    Scalar(f64),
    Histogram(HistogramValue),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: Labels,
    pub value: SeriesValue,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Counter families lose a trailing `_total`, as Prometheus' own client parser does.
    pub name: String,
    pub kind: FamilyKind,
    pub help: String,
    /// From an OpenMetrics `# UNIT` line.
    pub unit: Option<String>,
    pub series: Vec<Series>,
}

/// Every family of one body (summaries dropped), plus how many lines could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    pub families: Vec<Family>,
    pub bad_lines: usize,
    pub samples: usize,
}

/// Metadata gathered from `# HELP`/`# TYPE`/`# UNIT`, keyed by the name as written.
#[derive(Default)]
struct Metadata {
    kinds: HashMap<String, FamilyKind>,
    help: HashMap<String, String>,
    units: HashMap<String, String>,
}

/// One sample line, split.
struct SampleLine {
    name: String,
    labels: Labels,
    value: f64,
}

/// Parse a whole exposition body. Never fails; see `Scrape::bad_lines`.
pub fn parse(text: &str) -> Scrape {
    let mut meta = Metadata::default();
    let mut samples = Vec::new();
    let mut bad_lines = 0;
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r').trim_start();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if comment.trim() == "EOF" {
                break;
            }
            if read_comment(comment, &mut meta).is_err() {
                bad_lines += 1;
            }
            continue;
        }
        match read_sample(line) {
            Some(sample) => samples.push(sample),
            None => bad_lines += 1,
        }
    }
    let sample_count = samples.len();
    let mut scrape = group(samples, &meta);
    scrape.bad_lines = bad_lines;
    scrape.samples = sample_count;
    scrape
}

/// `# HELP name text`, `# TYPE name kind`, `# UNIT name unit`; other comments are fine.
fn read_comment(comment: &str, meta: &mut Metadata) -> Result<(), ()> {
    let comment = comment.trim_start();
    let (keyword, rest) = comment.split_once([' ', '\t']).unwrap_or((comment, ""));
    if !matches!(keyword, "HELP" | "TYPE" | "UNIT") {
        return Ok(());
    }
    let rest = rest.trim_start();
    let (name, after) = read_name(rest).ok_or(())?;
    let after = after.strip_prefix([' ', '\t']).unwrap_or(after);
    match keyword {
        "HELP" => {
            meta.help.insert(name, unescape_help(after));
        }
        "TYPE" => {
            let kind = FamilyKind::from_type_word(after.trim()).ok_or(())?;
            meta.kinds.insert(name, kind);
        }
        _ => {
            meta.units.insert(name, after.trim().to_string());
        }
    }
    Ok(())
}

fn unescape_help(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// A bare name `[a-zA-Z_:][a-zA-Z0-9_:]*` or a quoted UTF-8 name; returns it and the rest.
fn read_name(text: &str) -> Option<(String, &str)> {
    if text.starts_with('"') {
        return read_quoted(text);
    }
    let first = text.chars().next()?;
    if !is_name_start(first) {
        return None;
    }
    let end = text.find(|c: char| !is_name_char(c)).unwrap_or(text.len());
    Some((text[..end].to_string(), &text[end..]))
}

/// A double-quoted string with `\\`, `\"` and `\n` escapes; returns it and the rest.
fn read_quoted(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            },
            other => out.push(other),
        }
    }
    None
}

/// `name{labels} value [timestamp] [# {exemplar} value [ts]]`, or `{"quoted.name",labels} value`.
fn read_sample(line: &str) -> Option<SampleLine> {
    let (mut name, mut rest) = if line.starts_with('{') { (String::new(), line) } else { read_name(line)? };
    let mut labels = Vec::new();
    if let Some(inside) = rest.strip_prefix('{') {
        let (read, after) = read_labels(inside, &mut name)?;
        labels = read;
        rest = after;
    }
    if name.is_empty() || !rest.starts_with([' ', '\t']) {
        return None;
    }
    // An exemplar follows ` # `; it is not part of the value.
    let values = rest.split(" # ").next().unwrap_or(rest);
    let mut fields = values.split_whitespace();
    let value = parse_value(fields.next()?)?;
    if let Some(timestamp) = fields.next() {
        timestamp.parse::<f64>().ok()?;
    }
    if fields.next().is_some() {
        return None;
    }
    labels.sort();
    Some(SampleLine { name, labels, value })
}

/// Labels up to the closing `}`; a bare quoted string inside names the metric.
fn read_labels<'a>(mut text: &'a str, name: &mut String) -> Option<(Labels, &'a str)> {
    let mut labels = Vec::new();
    loop {
        text = text.trim_start();
        if let Some(after) = text.strip_prefix('}') {
            return Some((labels, after));
        }
        let (key, after) = read_name(text)?;
        let after = after.trim_start();
        if let Some(value_text) = after.strip_prefix('=') {
            let (value, after) = read_quoted(value_text.trim_start())?;
            labels.push((key, value));
            text = after;
        } else if name.is_empty() && text.starts_with('"') {
            *name = key;
            text = after;
        } else {
            return None;
        }
        text = text.trim_start();
        if let Some(after) = text.strip_prefix(',') {
            text = after;
        } else if !text.starts_with('}') {
            return None;
        }
    }
}

/// A sample value: a float, `+Inf`/`-Inf`/`NaN` in any case.
pub fn parse_value(text: &str) -> Option<f64> {
    match text.to_ascii_lowercase().as_str() {
        "+inf" | "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => text.parse::<f64>().ok().filter(|_| !text.contains(['i', 'I', 'n', 'N'])),
    }
}

/// Which family a sample belongs to, and which part of it (`_bucket`, `_sum`, …) it is.
fn family_of<'a>(name: &'a str, meta: &Metadata) -> (&'a str, FamilyKind, &'a str) {
    if let Some(kind) = meta.kinds.get(name)
        && *kind != FamilyKind::Histogram
        && *kind != FamilyKind::Summary
    {
        return (name, *kind, "");
    }
    for suffix in ["_bucket", "_sum", "_count", "_created", "_gsum", "_gcount", "_total"] {
        if let Some(base) = name.strip_suffix(suffix)
            && let Some(kind) = meta.kinds.get(base)
        {
            return (base, *kind, suffix);
        }
    }
    (name, meta.kinds.get(name).copied().unwrap_or(FamilyKind::Unknown), "")
}

fn group(samples: Vec<SampleLine>, meta: &Metadata) -> Scrape {
    let mut families: Vec<Family> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut histogram_series: HashMap<(usize, Labels), usize> = HashMap::new();
    for sample in samples {
        let (base, kind, part) = family_of(&sample.name, meta);
        if kind == FamilyKind::Summary || part == "_created" || part == "_gsum" || part == "_gcount" {
            continue;
        }
        let declared = base.to_string();
        let family_at = *index.entry(declared.clone()).or_insert_with(|| {
            let shown = match kind {
                FamilyKind::Counter => declared.strip_suffix("_total").unwrap_or(&declared).to_string(),
                _ => declared.clone(),
            };
            families.push(Family {
                name: shown,
                kind,
                help: meta.help.get(&declared).cloned().unwrap_or_default(),
                unit: meta.units.get(&declared).cloned().filter(|u| !u.is_empty()),
                series: Vec::new(),
            });
            families.len() - 1
        });
        let family = &mut families[family_at];
        if kind != FamilyKind::Histogram {
            if !family.series.iter().any(|s| s.labels == sample.labels) {
                family.series.push(Series { labels: sample.labels, value: SeriesValue::Scalar(sample.value) });
            }
            continue;
        }
        let mut labels = sample.labels;
        let le = match labels.iter().position(|(k, _)| k == "le") {
            Some(at) if part == "_bucket" => Some(labels.remove(at).1),
            _ => None,
        };
        let at = *histogram_series.entry((family_at, labels.clone())).or_insert_with(|| {
            family.series.push(Series { labels, value: SeriesValue::Histogram(HistogramValue::default()) });
            family.series.len() - 1
        });
        let SeriesValue::Histogram(histogram) = &mut family.series[at].value else { continue };
        match (part, le) {
            ("_bucket", Some(le)) => {
                if let Some(bound) = parse_value(&le).filter(|b| !b.is_nan()) {
                    histogram.buckets.push((canonical_le(&le, bound), bound, sample.value));
                }
            }
            ("_sum", _) => histogram.sum = sample.value,
            ("_count", _) => histogram.count = sample.value,
            _ => {}
        }
    }
    for family in &mut families {
        for series in &mut family.series {
            if let SeriesValue::Histogram(h) = &mut series.value {
                h.buckets.sort_by(|a, b| a.1.total_cmp(&b.1));
                h.buckets.dedup_by(|a, b| a.1 == b.1);
            }
        }
    }
    // A histogram series without buckets (e.g. only `_count`) carries nothing to aggregate.
    for family in &mut families {
        family.series.retain(|s| !matches!(&s.value, SeriesValue::Histogram(h) if h.buckets.is_empty()));
    }
    families.retain(|f| !f.series.is_empty());
    Scrape { families, bad_lines: 0, samples: 0 }
}

/// `+Inf` for every spelling of infinity; other bounds as written.
fn canonical_le(text: &str, bound: f64) -> String {
    if bound.is_infinite() { "+Inf".to_string() } else { text.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family<'a>(scrape: &'a Scrape, name: &str) -> &'a Family {
        scrape.families.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no family {name}: {scrape:?}"))
    }

    fn scalar(series: &Series) -> f64 {
        match series.value {
            SeriesValue::Scalar(v) => v,
            SeriesValue::Histogram(_) => panic!("not a scalar"),
        }
    }

    #[test]
    fn colon_names_counters_lose_total_and_histograms_group_under_their_type() {
        let text = "\
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name=\"m\"} 40.0
# HELP vllm:ttft_seconds Histogram of TTFT.
# TYPE vllm:ttft_seconds histogram
vllm:ttft_seconds_bucket{le=\"0.1\",model_name=\"m\"} 3
vllm:ttft_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 5
vllm:ttft_seconds_bucket{le=\"0.05\",model_name=\"m\"} 1
vllm:ttft_seconds_sum{model_name=\"m\"} 1.5
vllm:ttft_seconds_count{model_name=\"m\"} 5
vllm:ttft_seconds_created{model_name=\"m\"} 1.7e9
";
        let scrape = parse(text);
        assert_eq!(scrape.bad_lines, 0);
        let counter = family(&scrape, "vllm:generation_tokens");
        assert_eq!(counter.kind, FamilyKind::Counter);
        assert_eq!(counter.help, "Number of generation tokens processed.");
        assert_eq!(counter.series[0].labels, vec![("model_name".to_string(), "m".to_string())]);
        assert_eq!(scalar(&counter.series[0]), 40.0);
        let histogram = family(&scrape, "vllm:ttft_seconds");
        assert_eq!(histogram.series.len(), 1);
        let SeriesValue::Histogram(h) = &histogram.series[0].value else { panic!() };
        let bounds: Vec<&str> = h.buckets.iter().map(|b| b.0.as_str()).collect();
        assert_eq!(bounds, ["0.05", "0.1", "+Inf"]);
        assert_eq!((h.sum, h.count), (1.5, 5.0));
        assert_eq!(scrape.families.len(), 2);
    }

    #[test]
    fn label_escapes_commas_braces_and_quoted_names() {
        let text = "note{a=\"x,y=z \\\"q\\\"\",b=\"}{\\\\\\n\"} 1\n{\"my.metric\",tag=\"é\"} 2\n";
        let scrape = parse(text);
        assert_eq!(scrape.bad_lines, 0, "{scrape:?}");
        let note = family(&scrape, "note");
        assert_eq!(note.kind, FamilyKind::Unknown);
        assert_eq!(note.series[0].labels, vec![("a".into(), "x,y=z \"q\"".into()), ("b".into(), "}{\\\n".into())]);
        let dotted = family(&scrape, "my.metric");
        assert_eq!(dotted.series[0].labels, vec![("tag".into(), "é".into())]);
    }

    #[test]
    fn openmetrics_eof_unit_exemplars_special_values_and_timestamps() {
        let text = "\
# TYPE latency_seconds histogram
# UNIT latency_seconds seconds
latency_seconds_bucket{le=\"1.0\"} 2 # {trace_id=\"abc\"} 0.4 1700000000.123
latency_seconds_bucket{le=\"+Inf\"} 3
latency_seconds_sum 4.5
latency_seconds_count 3
up 1 1700000000000
temp_low -Inf
temp_high +Inf
temp_nan NaN
# EOF
after_eof 1
";
        let scrape = parse(text);
        assert_eq!(scrape.bad_lines, 0);
        assert_eq!(family(&scrape, "latency_seconds").unit.as_deref(), Some("seconds"));
        assert_eq!(scalar(&family(&scrape, "up").series[0]), 1.0);
        assert_eq!(scalar(&family(&scrape, "temp_low").series[0]), f64::NEG_INFINITY);
        assert_eq!(scalar(&family(&scrape, "temp_high").series[0]), f64::INFINITY);
        assert!(scalar(&family(&scrape, "temp_nan").series[0]).is_nan());
        assert!(scrape.families.iter().all(|f| f.name != "after_eof"));
    }

    #[test]
    fn summaries_are_dropped_untyped_runs_are_kept_and_bad_lines_only_counted() {
        let text = "\
# TYPE rpc_seconds summary
rpc_seconds{quantile=\"0.5\"} 0.2
rpc_seconds_sum 10
rpc_seconds_count 40
a 1
b 2
# TYPE g gauge
g{x=\"1\"} 3
this is not a metric
h{unterminated=\"1} 4
i 1 2 3 4
[{\"json\": true}]
";
        let scrape = parse(text);
        let names: Vec<&str> = scrape.families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "g"]);
        assert_eq!(scrape.bad_lines, 4);
        assert_eq!(family(&scrape, "g").kind, FamilyKind::Gauge);
    }

    #[test]
    fn llama_server_shaped_text_keeps_every_colon_family() {
        let text = "\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1200
# HELP llamacpp:tokens_predicted_seconds_total Predict process time
# TYPE llamacpp:tokens_predicted_seconds_total counter
llamacpp:tokens_predicted_seconds_total 3.5
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:predicted_tokens_seconds Average generation throughput in tokens/s.
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 3612.5
";
        let scrape = parse(text);
        assert_eq!((scrape.bad_lines, scrape.samples), (0, 4));
        let names: Vec<&str> = scrape.families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "llamacpp:prompt_tokens",
                "llamacpp:tokens_predicted_seconds",
                "llamacpp:requests_processing",
                "llamacpp:predicted_tokens_seconds"
            ]
        );
        assert_eq!(scalar(&family(&scrape, "llamacpp:predicted_tokens_seconds").series[0]), 3612.5);
    }

    #[test]
    fn values_are_strict() {
        assert_eq!(parse_value("1e3"), Some(1000.0));
        assert_eq!(parse_value("-0.5"), Some(-0.5));
        assert_eq!(parse_value("infinity"), None);
        assert_eq!(parse_value("nan2"), None);
        assert_eq!(parse_value(""), None);
    }
}
