//! TraceLab agentic-coding traces: JSONL (or gzipped), a row per LLM round
//! (`session_id`, `round_index`, `input_tokens_total`, `prefix_tokens`, `output_tokens`,
//! `timing_events` of ISO-8601 `timestamp`s, `tools`), read into weka traces as AIPerf does:
//! rounds ordered by submission (the latest input event), block ids minted from the recorded
//! prefix reuse, `think_time` the gap since the previous round ended, and a sub-agent session
//! nested under the session whose spawning tool call (Claude `Agent`/`Task` of 10 s or more,
//! Codex `spawn_agent`…`wait_agent`) contains its whole span, for the same `user` and `project`
//! (`plan::SubagentJoin` can turn the join off, leave Codex out, or change the 10 s).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use super::weka::{Item, Request, Subagent, Trace};
use crate::dataset::fields::{self, json_lines};
use crate::plan::{FileDataset, SubagentJoin, prompt_length_problem};

const CLAUDE_SPAWN_TOOLS: [&str; 2] = ["Agent", "Task"];
const INPUT_EVENTS: [&str; 2] = ["user_message", "tool_result"];
const OUTPUT_EVENTS: [&str; 3] = ["text", "reasoning", "tool_call"];
/// Trace ids keep at most this many characters (AIPerf's).
const MAX_ID_CHARS: usize = 150;

/// A tool call of a round.
struct Tool {
    name: String,
    emitted_s: Option<f64>,
    result_s: Option<f64>,
    latency_ms: Option<f64>,
}

/// One row: an LLM round.
struct Round {
    round_index: i64,
    /// When it was sent (its latest input event; its first output without one).
    submitted_s: Option<f64>,
    /// From sending to its last output event.
    api_time_s: Option<f64>,
    input_tokens: u64,
    prefix_tokens: u64,
    output_tokens: u64,
    /// Every event and tool time of the round (a session's span).
    stamps_s: Vec<f64>,
    tools: Vec<Tool>,
    who: (String, String),
    codex: bool,
    /// The model it ran (AIPerf's `unknown` when the row does not say).
    model: String,
}

/// The traces of the TraceLab file `path` (or inline records), one per root session.
pub(super) fn read(path: &Path, spec: &FileDataset) -> Result<Vec<Trace>> {
    let text = match &spec.records {
        Some(records) => records.clone(),
        None if path.extension().is_some_and(|ext| ext == "gz") => {
            let file =
                std::fs::File::open(path).with_context(|| format!("cannot read dataset file {}", path.display()))?;
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(file)
                .read_to_string(&mut text)
                .with_context(|| format!("cannot read gzipped dataset file {}", path.display()))?;
            text
        }
        None => fields::read(path)?,
    };
    let mut order: Vec<String> = Vec::new();
    let mut sessions: HashMap<String, Vec<Round>> = HashMap::new();
    for (at, row) in json_lines(path, &text)? {
        let Some(session_id) = row.get("session_id").and_then(Value::as_str).filter(|id| !id.is_empty()) else {
            continue;
        };
        let round = round(&at, &row)?;
        if !sessions.contains_key(session_id) {
            order.push(session_id.to_string());
        }
        sessions.entry(session_id.to_string()).or_default().push(round);
    }
    let block_size = spec.block_size.max(1) as u64;
    let join = &spec.trace.subagent_join;
    let parents = if join.enabled { join_index(&order, &sessions, join) } else { HashMap::new() };
    let mut traces: Vec<Trace> = Vec::new();
    let mut nested = std::collections::HashSet::new();
    for id in &order {
        if parents.contains_key(id.as_str()) {
            continue;
        }
        let children: Vec<(&str, &Spawn)> = order
            .iter()
            .filter_map(|child| {
                parents.get(child.as_str()).filter(|spawn| &spawn.parent == id).map(|spawn| (child.as_str(), spawn))
            })
            .collect();
        if let Some(trace) = build_trace(id, &sessions[id], &children, &sessions, block_size, &mut nested) {
            traces.push(trace);
        }
    }
    // Children that found no place (and grandchildren, which the schema cannot nest) stand alone.
    let standalone: Vec<&String> =
        order.iter().filter(|id| parents.contains_key(id.as_str()) && !nested.contains(id.as_str())).collect();
    for id in standalone {
        if let Some(trace) = build_trace(id, &sessions[id], &[], &sessions, block_size, &mut nested) {
            traces.push(trace);
        }
    }
    for (i, trace) in traces.iter().enumerate() {
        if traces[..i].iter().any(|earlier| earlier.id == trace.id) {
            bail!("{}: two TraceLab sessions share the trace id `{}`", path.display(), trace.id);
        }
    }
    Ok(traces)
}

fn round(at: &str, row: &Map<String, Value>) -> Result<Round> {
    let time = |value: &Value, what: &str| -> Result<Option<f64>> {
        match value {
            Value::Null => Ok(None),
            Value::String(text) if text.is_empty() => Ok(None),
            Value::String(text) => parse_time_s(text).map(Some).with_context(|| format!("{at}: {what}")),
            other => bail!("{at}: {what} must be an ISO-8601 time, got `{other}`"),
        }
    };
    let count = |key: &str| -> Result<u64> {
        match row.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(value) => match value.as_f64() {
                Some(n) => Ok(n.max(0.0) as u64),
                None => bail!("{at}: \"{key}\" must be a number, got `{value}`"),
            },
        }
    };
    let (mut inputs, mut outputs, mut stamps_s) = (Vec::new(), Vec::new(), Vec::new());
    let events = row.get("timing_events").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, event) in events.iter().enumerate() {
        let Some(stamp) =
            time(event.get("timestamp").unwrap_or(&Value::Null), &format!("timing_events[{i}].timestamp"))?
        else {
            continue;
        };
        stamps_s.push(stamp);
        let kind = event.get("event_type").and_then(Value::as_str).unwrap_or_default();
        if INPUT_EVENTS.contains(&kind) {
            inputs.push(stamp);
        } else if OUTPUT_EVENTS.contains(&kind) {
            outputs.push(stamp);
        }
    }
    let mut tools = Vec::new();
    for (i, tool) in
        row.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default().iter().enumerate()
    {
        let emitted_s = time(tool.get("emitted_at").unwrap_or(&Value::Null), &format!("tools[{i}].emitted_at"))?;
        let result_s = time(tool.get("result_at").unwrap_or(&Value::Null), &format!("tools[{i}].result_at"))?;
        stamps_s.extend(emitted_s.into_iter().chain(result_s));
        tools.push(Tool {
            name: tool.get("tool_name").and_then(Value::as_str).unwrap_or_default().to_string(),
            emitted_s,
            result_s,
            latency_ms: tool.get("tool_wall_latency_ms").and_then(Value::as_f64),
        });
    }
    let latest = |stamps: &[f64]| stamps.iter().copied().reduce(f64::max);
    let earliest = |stamps: &[f64]| stamps.iter().copied().reduce(f64::min);
    let submitted_s = latest(&inputs).or(earliest(&outputs));
    let api_time_s = submitted_s.zip(latest(&outputs)).map(|(sent, last)| (last - sent).max(0.0));
    let who = |key: &str| row.get(key).map(Value::to_string).unwrap_or_default();
    let input_tokens = count("input_tokens_total")?;
    if let Some(problem) = prompt_length_problem(input_tokens) {
        bail!("{at}: \"input_tokens_total\" {problem}");
    }
    Ok(Round {
        round_index: row.get("round_index").and_then(Value::as_i64).unwrap_or(0),
        submitted_s,
        api_time_s,
        input_tokens,
        prefix_tokens: count("prefix_tokens")?,
        output_tokens: count("output_tokens")? + count("reasoning_output_tokens")?,
        stamps_s,
        tools,
        who: (who("user"), who("project")),
        codex: row.get("provider").and_then(Value::as_str) == Some("codex"),
        model: row
            .get("model")
            .and_then(Value::as_str)
            .filter(|model| !model.is_empty())
            .unwrap_or("unknown")
            .to_string(),
    })
}

/// ISO-8601 to POSIX seconds; a time without a zone is UTC.
fn parse_time_s(text: &str) -> Result<f64> {
    let seconds = |t: chrono::DateTime<chrono::Utc>| t.timestamp_micros() as f64 / 1e6;
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(&text.replace(' ', "T")) {
        return Ok(seconds(time.to_utc()));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(time) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Ok(seconds(time.and_utc()));
        }
    }
    bail!("`{text}` is not an ISO-8601 time")
}

/// A sub-agent session's parent and the window of the tool call that spawned it.
struct Spawn {
    parent: String,
    start_s: f64,
    duration_ms: f64,
}

/// Each session that fits whole inside another session's spawning tool call: the tightest
/// such call of the same user and project.
fn join_index(order: &[String], sessions: &HashMap<String, Vec<Round>>, join: &SubagentJoin) -> HashMap<String, Spawn> {
    let span = |rounds: &[Round]| {
        let stamps = rounds.iter().flat_map(|round| round.stamps_s.iter().copied());
        stamps.fold(None, |span: Option<(f64, f64)>, t| Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t)))))
    };
    let mut windows: Vec<(f64, f64, &str)> = Vec::new();
    for id in order {
        let rounds = &sessions[id];
        let tools = rounds.iter().flat_map(|round| &round.tools);
        if rounds[0].codex {
            if !join.codex {
                continue;
            }
            let spawned =
                tools.clone().filter(|t| t.name == "spawn_agent").filter_map(|t| t.emitted_s).reduce(f64::min);
            let waited = tools.filter(|t| t.name == "wait_agent").filter_map(|t| t.result_s).reduce(f64::max);
            if let Some((start, end)) = spawned.zip(waited).filter(|(start, end)| end > start) {
                windows.push((start, end, id));
            }
            continue;
        }
        for tool in tools.filter(|t| CLAUDE_SPAWN_TOOLS.contains(&t.name.as_str())) {
            if let (Some(latency), Some(start), Some(end)) = (tool.latency_ms, tool.emitted_s, tool.result_s)
                && latency >= join.min_spawn_ms as f64
            {
                windows.push((start, end, id));
            }
        }
    }
    let mut parents = HashMap::new();
    for id in order {
        let Some((start, end)) = span(&sessions[id]) else { continue };
        let who = &sessions[id][0].who;
        let tightest = windows
            .iter()
            .filter(|(w_start, w_end, parent)| {
                *parent != id && &sessions[*parent][0].who == who && start >= *w_start && end <= *w_end
            })
            .min_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)).then(a.0.total_cmp(&b.0)).then(a.2.cmp(b.2)));
        if let Some(&(start_s, end_s, parent)) = tightest {
            let duration_ms = ((end_s - start_s) * 1000.0).floor();
            parents.insert(id.clone(), Spawn { parent: parent.to_string(), start_s, duration_ms });
        }
    }
    // The schema nests one level: a grandchild stays a trace of its own.
    let nested_parents: Vec<String> = parents
        .keys()
        .filter(|id| parents.get(*id).is_some_and(|spawn| parents.contains_key(&spawn.parent)))
        .cloned()
        .collect();
    for id in nested_parents {
        parents.remove(&id);
    }
    parents
}

/// A session's dated rounds in sending order (ties by `round_index`, then file order).
fn ordered(rounds: &[Round]) -> Vec<&Round> {
    let mut dated: Vec<&Round> = rounds.iter().filter(|round| round.submitted_s.is_some()).collect();
    dated.sort_by(|a, b| {
        a.submitted_s.unwrap_or(0.0).total_cmp(&b.submitted_s.unwrap_or(0.0)).then(a.round_index.cmp(&b.round_index))
    });
    dated
}

/// Block ids of each round: the previous round's first `prefix_tokens / block_size` ids kept,
/// fresh ids for the rest of its whole blocks (one id space per trace, shared with its children).
fn mint_hash_ids(rounds: &[&Round], block_size: u64, next_id: &mut u64) -> Vec<Vec<u64>> {
    let mut previous: Vec<u64> = Vec::new();
    rounds
        .iter()
        .map(|round| {
            let blocks = (round.input_tokens / block_size) as usize;
            let reused =
                ((round.prefix_tokens.min(round.input_tokens) / block_size) as usize).min(previous.len()).min(blocks);
            let mut ids = previous[..reused].to_vec();
            ids.extend(*next_id..*next_id + (blocks - reused) as u64);
            *next_id += (blocks - reused) as u64;
            previous = ids.clone();
            ids
        })
        .collect()
}

/// Rounds as weka requests, times relative to `t0_s`.
fn requests(rounds: &[&Round], hash_ids: Vec<Vec<u64>>, t0_s: f64) -> Vec<Request> {
    let mut previous_end_s: Option<f64> = None;
    rounds
        .iter()
        .zip(hash_ids)
        .map(|(round, hash_ids)| {
            let t_s = round.submitted_s.unwrap_or(t0_s) - t0_s;
            let think_time_s = previous_end_s.map(|end| (t_s - end).max(0.0));
            previous_end_s = Some(t_s + round.api_time_s.unwrap_or(0.0));
            Request {
                t_s,
                input_tokens: round.input_tokens.max(1),
                output_tokens: round.output_tokens.max(1),
                hash_ids,
                api_time_s: round.api_time_s,
                think_time_s,
                model: round.model.clone(),
            }
        })
        .collect()
}

fn build_trace(
    id: &str,
    rounds: &[Round],
    children: &[(&str, &Spawn)],
    sessions: &HashMap<String, Vec<Round>>,
    block_size: u64,
    nested: &mut std::collections::HashSet<String>,
) -> Option<Trace> {
    let timed = ordered(rounds);
    let t0_s = timed.first()?.submitted_s?;
    let mut next_id = 1;
    let hash_ids = mint_hash_ids(&timed, block_size, &mut next_id);
    let parent = requests(&timed, hash_ids, t0_s);
    let mut placed: Vec<(usize, Subagent)> = Vec::new();
    for (child, spawn) in children {
        let child_rounds = ordered(&sessions[*child]);
        if child_rounds.is_empty() {
            continue;
        }
        let hash_ids = mint_hash_ids(&child_rounds, block_size, &mut next_id);
        let spawn_t_s = spawn.start_s - t0_s;
        let mut inner = requests(&child_rounds, hash_ids, t0_s);
        for request in &mut inner {
            request.t_s = request.t_s.max(spawn_t_s);
        }
        inner[0].think_time_s = None;
        let Some(anchor) = parent.iter().rposition(|request| request.t_s <= spawn_t_s) else { continue };
        nested.insert(child.to_string());
        let agent_id = safe_id(child);
        placed.push((
            anchor,
            Subagent { t_s: spawn_t_s, agent_id, duration_ms: Some(spawn.duration_ms), requests: inner },
        ));
    }
    placed.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.t_s.total_cmp(&b.1.t_s)));
    let mut items = Vec::with_capacity(parent.len() + placed.len());
    let mut placed = placed.into_iter().peekable();
    for (index, request) in parent.into_iter().enumerate() {
        items.push(Item::Request(request));
        while let Some((_, subagent)) = placed.next_if(|(anchor, _)| *anchor == index) {
            items.push(Item::Subagent(subagent));
        }
    }
    Some(Trace { id: safe_id(id), block_size, items })
}

/// A session id as a trace id: runs of characters other than letters, digits, `.`, `_` and
/// `-` become `_`, at most 150 characters.
fn safe_id(session_id: &str) -> String {
    let mut id = String::new();
    let mut in_run = false;
    for c in session_id.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            id.push(c);
            in_run = false;
        } else if !in_run {
            id.push('_');
            in_run = true;
        }
    }
    id.chars().take(MAX_ID_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::agentic::tests::spec;
    use crate::plan::FileFormat;

    /// A row of session `id` sent at second `sent` of 10:00, answered `api` s later.
    fn row(id: &str, index: u32, sent: u32, api: u32, tokens: (u64, u64, u64), tools: &str) -> String {
        let (input, prefix, output) = tokens;
        format!(
            r#"{{"session_id": "{id}", "round_index": {index}, "user": "u", "project": "p", "provider": "claude", "input_tokens_total": {input}, "prefix_tokens": {prefix}, "newly_append_tokens": {}, "output_tokens": {output}, "timing_events": [{{"event_type": "user_message", "timestamp": "2025-05-01T10:00:{sent:02}Z"}}, {{"event_type": "text", "timestamp": "2025-05-01T10:00:{:02}Z"}}], "tools": [{tools}]}}"#,
            input - prefix,
            sent + api
        )
    }

    /// The root's `Agent` call, from 10:00:02 to 10:00:40 (38 s).
    const AGENT_CALL: &str = r#"{"tool_name": "Agent", "emitted_at": "2025-05-01T10:00:02Z", "result_at": "2025-05-01T10:00:40Z", "tool_wall_latency_ms": 38000}"#;

    #[test]
    fn rounds_become_a_trace_with_its_sub_agent_nested() {
        let lines = [
            row("claude:root", 0, 0, 2, (200, 0, 10), AGENT_CALL),
            row("claude:sub", 0, 5, 1, (100, 0, 5), ""),
            row("claude:sub", 1, 10, 1, (150, 100, 5), ""),
            row("claude:root", 1, 45, 1, (300, 192, 10), ""),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let traces = read(&path, &spec(&path, FileFormat::Tracelab)).unwrap();
        assert_eq!(traces.len(), 1, "the sub-agent is nested");
        let trace = &traces[0];
        assert_eq!(trace.id, "claude_root");
        let Item::Request(first) = &trace.items[0] else { panic!("a request first") };
        assert_eq!((first.t_s, first.api_time_s, first.think_time_s), (0.0, Some(2.0), None));
        assert_eq!(first.hash_ids.len(), 12, "200 tokens of 16-token blocks");
        let Item::Subagent(sub) = &trace.items[1] else { panic!("then the sub-agent") };
        assert_eq!((sub.agent_id.as_str(), sub.t_s, sub.duration_ms), ("claude_sub", 2.0, Some(38000.0)));
        assert_eq!(sub.requests[1].t_s, 10.0);
        assert_eq!(sub.requests[1].think_time_s, Some(4.0), "10 s less the first round's end at 6 s");
        assert_eq!(&sub.requests[1].hash_ids[..6], &sub.requests[0].hash_ids[..6], "100 prefix tokens keep 6 blocks");
        let Item::Request(last) = &trace.items[2] else { panic!("then the root's second round") };
        assert_eq!((last.t_s, last.think_time_s), (45.0, Some(43.0)));
        assert_eq!(&last.hash_ids[..12], &first.hash_ids[..], "192 prefix tokens keep 12 blocks");
        assert_eq!(last.hash_ids[12..], [13, 14, 15, 16, 17, 18], "fresh ids, minted before the child's");
    }

    #[test]
    fn the_join_can_be_off_stricter_or_without_codex() {
        let claude = [
            row("claude:root", 0, 0, 2, (200, 0, 10), AGENT_CALL),
            row("claude:sub", 0, 5, 1, (100, 0, 5), ""),
            row("claude:root", 1, 45, 1, (300, 192, 10), ""),
        ];
        let spawn = r#"{"tool_name": "spawn_agent", "emitted_at": "2025-05-01T10:00:02Z", "result_at": "2025-05-01T10:00:02Z"}, {"tool_name": "wait_agent", "emitted_at": "2025-05-01T10:00:03Z", "result_at": "2025-05-01T10:00:40Z"}"#;
        let codex = claude
            .iter()
            .map(|line| line.replace("\"claude\"", "\"codex\"").replace(AGENT_CALL, spawn))
            .collect::<Vec<_>>();
        let dir = tempfile::tempdir().unwrap();
        let traces_with = |lines: &[String], join: SubagentJoin| {
            let path = dir.path().join("trace.jsonl");
            std::fs::write(&path, lines.join("\n")).unwrap();
            let mut spec = spec(&path, FileFormat::Tracelab);
            spec.trace.subagent_join = join;
            read(&path, &spec).unwrap().len()
        };
        let defaults = SubagentJoin::default();
        assert_eq!(traces_with(&claude, defaults.clone()), 1, "joined by the 38 s Agent call");
        assert_eq!(traces_with(&claude, SubagentJoin { enabled: false, ..defaults.clone() }), 2, "every session alone");
        assert_eq!(traces_with(&claude, SubagentJoin { min_spawn_ms: 40_000, ..defaults.clone() }), 2, "too short");
        assert_eq!(traces_with(&codex, defaults.clone()), 1, "joined by the spawn…wait window");
        assert_eq!(traces_with(&codex, SubagentJoin { codex: false, ..defaults }), 2, "Codex left out");
    }

    #[test]
    fn a_bad_time_names_its_line_and_a_gzipped_file_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(
            &path,
            format!(
                "{}\n{}",
                row("a", 0, 0, 1, (10, 0, 1), ""),
                row("a", 1, 3, 1, (10, 0, 1), "").replace("10:00:03Z", "soon")
            ),
        )
        .unwrap();
        let error = format!("{:#}", read(&path, &spec(&path, FileFormat::Tracelab)).unwrap_err());
        assert!(error.contains("bad.jsonl:2: timing_events[0].timestamp"), "{error}");
        assert!(error.contains("`2025-05-01Tsoon` is not an ISO-8601 time"), "{error}");

        let gz = dir.path().join("trace.jsonl.gz");
        let mut encoder =
            flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, row("a", 0, 0, 1, (10, 0, 1), "").as_bytes()).unwrap();
        encoder.finish().unwrap();
        assert_eq!(read(&gz, &spec(&gz, FileFormat::Tracelab)).unwrap().len(), 1);
    }
}
