//! The Rhai face of scripted sessions (`agents/scripted/`): `users(#{ users, session: agent })`
//! (read here for `phases.rs`), the session `s` a function gets with its steps (`s.chat`,
//! `s.embed`, `s.rerank`, `s.wait`), its sub-agents (`s.sub_agent()`) and its answers
//! (`answers.rs`), the message helpers, and the functions kept beside the plans, which name
//! them only.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rhai::{
    AST, Array, Dynamic, Engine, EvalAltResult, FnPtr, ImmutableString, Map, Module, NativeCallContext, Position,
    Shared,
};
use serde_json::Value;

use super::answers::Answer;
use super::imports::LoadedModules;
use super::keys::{MapReader, ScriptResult, script_error};
use crate::agents::scripted::{ChatStep, PhaseOver, ScriptedPlayer, Session, SessionProgram, ToolResult};
use crate::load::scripted::{SessionPlayer, StepAnswer};
use crate::plan::{Endpoint, LoadMode};

/// The session functions a scenario's phases name, and the engine and script that run them.
pub struct SessionFunctions {
    /// Each function by name, and where the first phase that names it was built.
    functions: Mutex<BTreeMap<String, (FnPtr, BuiltAt)>>,
    /// Weak: the engine's own functions hold the host that holds this.
    script: OnceLock<(Weak<Engine>, Arc<AST>)>,
    /// The modules the scenario imported: a closure a module's function made is the module's.
    modules: Arc<LoadedModules>,
    scenario: PathBuf,
}

impl SessionFunctions {
    pub fn new(scenario: PathBuf, modules: Arc<LoadedModules>) -> Self {
        Self { functions: Mutex::new(BTreeMap::new()), script: OnceLock::new(), modules, scenario }
    }

    /// The functions `function` is called among: the scenario's, or those of the module that
    /// defines it (a closure a library made); with the parameters each definition by its name
    /// takes beyond the curried ones (none: no definition is known).
    pub(super) fn home(&self, function: &FnPtr) -> Option<(Arc<AST>, Vec<usize>)> {
        let (_, ast) = self.script.get()?;
        let name = function.fn_name();
        let beyond_curried = |params: usize| params.saturating_sub(function.curry().len());
        let defined: Vec<usize> = ast
            .iter_functions()
            .filter(|defined| defined.name == name)
            .map(|f| beyond_curried(f.params.len()))
            .collect();
        if !defined.is_empty() {
            return Some((ast.clone(), defined));
        }
        match self.modules.defining(name) {
            Some(module) => {
                let defined = module
                    .iter_script_fn_info()
                    .filter(|(_, _, defined, ..)| *defined == name)
                    .map(|(_, _, _, params, _)| beyond_curried(params))
                    .collect();
                Some((Arc::new(AST::new_from_module(module)), defined))
            }
            None => Some((ast.clone(), Vec::new())),
        }
    }

    /// The engine the session functions run in, while the scenario runs.
    pub fn engine(&self) -> Option<Arc<Engine>> {
        self.script.get()?.0.upgrade()
    }

    /// The engine and the compiled scenario the session functions run in.
    pub fn attach(&self, engine: &Arc<Engine>, ast: &AST) {
        let _ = self.script.set((Arc::downgrade(engine), Arc::new(ast.clone())));
    }

    /// Why `function` cannot play a session: it takes other than one parameter (the session), or
    /// neither the scenario nor a module it imported defines a function by its name. None when
    /// it can, or when its definition is nowhere to be seen (a closure of no known module).
    fn unfit(&self, function: &FnPtr) -> Option<String> {
        let (_, defined) = self.home(function)?;
        let name = function.fn_name();
        let shown = if function.is_anonymous() { "the session function".to_string() } else { format!("`{name}`") };
        match defined.as_slice() {
            [] if function.is_anonymous() => None,
            [] => Some(format!("`session` names `{name}`, which the scenario does not define (fn {name}(s) {{ .. }})")),
            takes if takes.contains(&1) => None,
            [takes, ..] => Some(format!(
                "{shown} takes {takes} parameters; a session function takes one, the session: `|s| {{ .. }}`"
            )),
        }
    }

    /// Keep `function` for the phase built at `built_at`; the name the plan gives it. A function
    /// that captured nothing is the same wherever it is named. A closure's captured values make
    /// it one of its own (`agent_of(3)` and `agent_of(5)` are one function, two closures), so each
    /// but the first of a function gets its name with `#2`, `#3`, … (in the order the phases
    /// are built: the same in every process of a run).
    fn keep(&self, function: FnPtr, built_at: BuiltAt) -> String {
        let base = function.fn_name().to_string();
        let mut functions = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if function.curry().is_empty() {
            functions.entry(base.clone()).or_insert((function, built_at));
            return base;
        }
        let kept = functions.keys().filter(|name| function_of(name) == base).count();
        let name = if kept == 0 { base } else { format!("{base}#{}", kept + 1) };
        functions.insert(name.clone(), (function, built_at));
        name
    }

    /// The player of the scripted phases; None when the scenario defines none.
    pub fn player(&self) -> Option<Arc<dyn SessionPlayer>> {
        Some(Arc::new(ScriptedPlayer::new(self.programs()?)))
    }

    /// The player of `aiperf check`'s trial of the functions (`session_trial.rs`).
    pub fn trial_player(&self) -> Option<Arc<dyn SessionPlayer>> {
        Some(Arc::new(ScriptedPlayer::for_trial(self.programs()?)))
    }

    /// Each session function as its player calls it, by name; None when there is none.
    fn programs(&self) -> Option<HashMap<String, SessionProgram>> {
        let functions = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if functions.is_empty() {
            return None;
        }
        let (engine, ast) = self.script.get()?.clone();
        let programs: HashMap<String, SessionProgram> = functions
            .iter()
            .map(|(name, (function, built_at))| {
                let (engine, ast, function, built_at) =
                    (engine.clone(), ast.clone(), function.clone(), built_at.clone());
                let home = self.home(&function).map_or_else(|| ast.clone(), |(home, _)| home);
                let scenario = self.scenario.clone();
                let program: SessionProgram = Arc::new(move |session: Session| {
                    let Some(engine) = engine.upgrade() else { return Err("the scenario has ended".to_string()) };
                    // As `FnPtr::call`, with the modules imported where the phase was built.
                    let mut global = engine.new_global_runtime_state();
                    global.lib.push(home.shared_lib().clone());
                    for (alias, module) in &built_at.imports {
                        global.push_import(alias.clone(), module.clone());
                    }
                    let context = NativeCallContext::new_with_all_fields(
                        &engine,
                        function.fn_name(),
                        None,
                        &global,
                        Position::NONE,
                    );
                    function
                        .call_raw(&context, None, [Dynamic::from(session)])
                        .map(|_| ())
                        .map_err(|error| describe(&scenario, &error, &engine, &ast, built_at.position))
                });
                (name.clone(), program)
            })
            .collect();
        Some(programs)
    }
}

/// The function a plan's session name names (`anon$…#2`: the second closure of `anon$…`).
pub fn function_of(session: &str) -> &str {
    session.split_once('#').map_or(session, |(function, _)| function)
}

/// Seed Rhai's hashing alike in every process, so that a closure gets the same name (`anon$…`)
/// in each: the plans of a run's segments, which name their session functions, then agree.
/// Only the first call counts, and only before Rhai hashed anything.
pub fn same_closure_names_in_every_process() {
    let _ = rhai::config::hashing::set_hashing_seed(Some([0x5eed, 0xa1, 0x9e4f, 0x2026]));
}

/// `file:line:column: message` of a session's error, without saying it was in a closure (nor, for
/// a sub-agent's run by `s.parallel`, in a closure in a closure). An error of the sandbox's
/// limits (a runaway loop or recursion) has no line of its own: Rhai puts it at the outermost
/// call, the worker's, so it names the phase that runs the function.
fn describe(scenario: &Path, error: &EvalAltResult, engine: &Engine, ast: &AST, phase_at: Position) -> String {
    let mut described = super::from_eval_error(scenario, error, engine, ast);
    if described.line.is_none() && !phase_at.is_none() {
        described.line = phase_at.line();
        described.column = phase_at.position();
        let limits = if error.is_system_exception() { "; the limits hold for each session" } else { "" };
        described.message += &format!(" (in a session of the phase here{limits})");
    }
    if matches!(error.unwrap_inner(), EvalAltResult::ErrorDataRace(..)) {
        described.message += RACE_HINT;
    }
    described.to_string().replace(" (in a closure)", "")
}

/// What a data race in a session most likely means (`s.parallel` refuses the other shared handles).
const RACE_HINT: &str = " (most likely a function given to `s.parallel` captured the handle it was called on, `s`: \
     each function uses only the sub-agent it is given, `|a| a.chat(..)`)";

/// Where a phase builder was called: its position, and the modules imported there, which its
/// session function sees (`import "lib" as lib;` at the top, `lib::f()` in the function).
#[derive(Clone)]
pub struct BuiltAt {
    pub position: Position,
    imports: Vec<(ImmutableString, Shared<Module>)>,
}

impl BuiltAt {
    pub fn of(context: &NativeCallContext) -> Self {
        let imports = context
            .global_runtime_state()
            .iter_imports_raw()
            .map(|(alias, module)| (alias.clone(), module.clone()))
            .collect::<Vec<_>>();
        // Listed last first; pushed back in the order they were imported.
        Self { position: context.call_position(), imports: imports.into_iter().rev().collect() }
    }
}

/// `users(#{ users: 50, session: agent, duration: minutes(2) })` (or `concurrency(#{ .. })`):
/// the mode of a scripted phase.
/// `built_at`: where the phase's builder was called.
pub(super) fn scripted_mode(
    r: &mut MapReader,
    users: usize,
    functions: &SessionFunctions,
    built_at: BuiltAt,
) -> ScriptResult<LoadMode> {
    let what = r.what();
    for key in ["rate", "turns", "think_time", "prefill_concurrency", "ramp", "prefill_ramp"] {
        if r.has(key) {
            return script_error(format!("{what}: `{key}` does not apply to scripted sessions (`session`)"));
        }
    }
    let value = r.opt_value("session").unwrap_or_default();
    let function = if let Some(function) = value.clone().try_cast::<FnPtr>() {
        function
    } else if let Some(name) = value.clone().try_cast::<String>() {
        if let Some((module, function)) = name.split_once("::") {
            return script_error(format!(
                "{what}: `session` names `{name}`: a module's function is called from a closure, `session: |s| {module}::{function}(s)`"
            ));
        }
        FnPtr::new(name).map_err(|e| e.to_string())?
    } else {
        return script_error(format!(
            "{what}: `session` must be a function, e.g. `|s| {{ s.chat(#{{ user: \"hi\" }}); }}`, got {}",
            value.type_name()
        ));
    };
    if let Some(why) = functions.unfit(&function) {
        return script_error(format!("{what}: {why}"));
    }
    let seed = r.opt_u64("seed")?.unwrap_or(0);
    let workers = r.opt_u64("script_workers")?.map(|workers| workers as usize);
    // Only `users(..)` takes a session rate; `concurrency(..)` refused it as an unknown key.
    let session_rate = if r.has("session_rate") { r.opt_f64("session_rate")? } else { None };
    Ok(LoadMode::Scripted { users, session: functions.keep(function, built_at), seed, workers, session_rate })
}

/// The longest text `s.text` makes, in tokens.
const MAX_TEXT_TOKENS: u64 = 1_000_000;

pub fn register(engine: &mut Engine) {
    super::answers::register(engine);
    engine.register_get("id", |s: &mut Session| s.id() as i64);
    engine.register_get("turn", |s: &mut Session| i64::from(s.turn()));
    engine.register_get("steps", |s: &mut Session| s.steps() as i64);
    engine.register_get("tool_calls", |s: &mut Session| s.tool_calls() as i64);
    engine.register_get("depth", |s: &mut Session| i64::from(s.depth()));
    engine.register_fn("sub_agent", |s: &mut Session| -> ScriptResult<Session> { s.sub_agent().or_else(script_error) });
    engine.register_get("history", |s: &mut Session| -> ScriptResult<Dynamic> { rhai::serde::to_dynamic(s.history()) });
    engine.register_get_set("state", |s: &mut Session| s.values(), |s: &mut Session, values: Map| s.set_values(values));
    engine.register_fn("chat", chat);
    // `s.chat("hi")`: `s.chat(#{ user: "hi" })`.
    engine.register_fn("chat", |s: &mut Session, user: ImmutableString| {
        let mut map = Map::new();
        map.insert("user".into(), user.into());
        chat(s, map)
    });
    engine.register_fn("embed", embed);
    engine.register_fn("rerank", rerank);
    engine.register_fn("random", |s: &mut Session| s.random());
    engine.register_fn("sample", |s: &mut Session, dist: Dynamic| -> ScriptResult<f64> {
        let dist =
            super::distributions::dist_from(&dist).or_else(|problem| script_error(format!("s.sample: {problem}")))?;
        Ok(s.sample(&dist))
    });
    engine.register_fn("text", |s: &mut Session, tokens: i64| -> ScriptResult<String> {
        match u64::try_from(tokens) {
            Ok(tokens) if tokens <= MAX_TEXT_TOKENS => Ok(s.text(tokens)),
            _ => script_error(format!("s.text: the tokens must be 0 to {MAX_TEXT_TOKENS}, got {tokens}")),
        }
    });
    engine.register_fn("pick", |s: &mut Session, items: Array| -> ScriptResult<Dynamic> {
        match items.get(s.below(items.len())) {
            Some(item) => Ok(item.clone()),
            None => script_error("s.pick: the array is empty"),
        }
    });
    engine.register_fn("wait", wait);
    engine.register_fn("wait", |s: &mut Session, seconds: i64| wait(s, seconds as f64));
    engine.register_fn("user", |text: &str| message("user", text));
    engine.register_fn("system", |text: &str| message("system", text));
    engine.register_fn("assistant", |text: &str| message("assistant", text));
    engine.register_fn("tool_result", |call: Map, content: Dynamic| -> Map {
        let mut result = Map::new();
        result.insert("tool_call_id".into(), call.get("id").cloned().unwrap_or_default());
        result.insert("content".into(), content);
        result
    });
}

fn message(role: &str, text: &str) -> Map {
    let mut message = Map::new();
    message.insert("role".into(), role.into());
    message.insert("content".into(), text.into());
    message
}

/// `s.wait(seconds)`: a negative wait is none, as k6's `sleep`; NaN (`0.0 / 0.0`) is an error.
fn wait(s: &mut Session, seconds: f64) -> ScriptResult<()> {
    if seconds.is_nan() {
        return script_error("s.wait: the seconds are not a number (NaN)");
    }
    phase_goes_on(s.wait(seconds))
}

pub(super) fn phase_goes_on<T>(result: Result<T, PhaseOver>) -> ScriptResult<T> {
    result.or_else(|PhaseOver| script_error("the phase is over; the session ends here"))
}

/// `s.chat(#{ messages: [user("..")], tools: TOOLS, tool_results: [..], max_tokens: 256, tag: "plan" })`
fn chat(s: &mut Session, map: Map) -> ScriptResult<Dynamic> {
    let mut r = MapReader::new(
        "chat",
        map,
        &["messages", "user", "tools", "tool_results", "max_tokens", "endpoint", "tag", "extra"],
    )?;
    let mut messages = Vec::new();
    for (i, item) in r.opt_array("messages")?.unwrap_or_default().into_iter().enumerate() {
        messages.push(match item.clone().try_cast::<String>() {
            Some(text) => serde_json::json!({ "role": "user", "content": text }),
            None => match json_of(&item, &format!("chat: messages[{i}]"))? {
                message if message.get("role").is_some_and(Value::is_string) => message,
                _ => {
                    return script_error(format!(
                        "chat: messages[{i}] must be a string or a message #{{ role, content }}, got {} `{item}`",
                        item.type_name()
                    ));
                }
            },
        });
    }
    if let Some(text) = r.opt_string("user")? {
        messages.push(serde_json::json!({ "role": "user", "content": text }));
    }
    let tools = match r.opt_value("tools") {
        Some(tools) => match json_of(&tools, "chat: `tools`")? {
            Value::Array(list) if list.iter().all(Value::is_object) => Some(Value::Array(list)),
            _ => {
                return script_error(format!(
                    "chat: `tools` must be a list of tool definitions #{{ type: \"function\", function: #{{ name, .. }} }}, got {} `{tools}`",
                    tools.type_name()
                ));
            }
        },
        None => None,
    };
    let tool_results = tool_results(r.opt_array("tool_results")?.unwrap_or_default())?;
    let max_tokens = r.opt_u64("max_tokens")?;
    if max_tokens == Some(0) {
        return script_error("chat: `max_tokens` must be at least 1 (leave it out for the server's own length)");
    }
    let step = ChatStep {
        messages,
        tool_results,
        tools,
        max_tokens,
        endpoint: r.opt_custom::<Endpoint>("endpoint", "endpoint(#{..})")?,
        tag: r.opt_string("tag")?,
        extra: extra(&mut r)?,
    };
    let tag = step.tag.clone().unwrap_or_else(|| "chat".into());
    answered(s.chat(step), tag)
}

/// `s.embed(#{ endpoint: embedder, input: ["..", ".."], tag: "embed" })`
fn embed(s: &mut Session, map: Map) -> ScriptResult<Dynamic> {
    let mut r = MapReader::new("embed", map, &["input", "endpoint", "tag", "extra"])?;
    let inputs = match r.opt_value("input") {
        Some(value) => strings(value, "embed: `input`")?,
        None => return script_error("embed: `input` is required (a string or a list of strings)"),
    };
    if inputs.is_empty() {
        return script_error("embed: `input` is an empty list, which embeddings APIs refuse: give at least one text");
    }
    let endpoint = r.opt_custom::<Endpoint>("endpoint", "endpoint(#{..})")?;
    let tag = r.opt_string("tag")?;
    let extra = extra(&mut r)?;
    let shown = tag.clone().unwrap_or_else(|| "embed".into());
    answered(s.embed(endpoint, &inputs, tag, &extra), shown)
}

/// `s.rerank(#{ endpoint: reranker, query: "..", documents: [..], tag: "rerank" })`
fn rerank(s: &mut Session, map: Map) -> ScriptResult<Dynamic> {
    let mut r = MapReader::new("rerank", map, &["query", "documents", "endpoint", "tag", "extra"])?;
    let query = r.string("query")?;
    let documents = match r.opt_value("documents") {
        Some(value) => strings(value, "rerank: `documents`")?,
        None => return script_error("rerank: `documents` is required (a list of strings)"),
    };
    if documents.is_empty() {
        return script_error(
            "rerank: `documents` is an empty list, which rerank APIs refuse: give at least one document",
        );
    }
    let endpoint = r.opt_custom::<Endpoint>("endpoint", "endpoint(#{..})")?;
    let tag = r.opt_string("tag")?;
    let extra = extra(&mut r)?;
    let shown = tag.clone().unwrap_or_else(|| "rerank".into());
    answered(s.rerank(endpoint, &query, &documents, tag, &extra), shown)
}

fn extra(r: &mut MapReader) -> ScriptResult<serde_json::Map<String, Value>> {
    match r.opt_map("extra")? {
        Some(map) => match json_of(&Dynamic::from_map(map), "`extra`")? {
            Value::Object(fields) => Ok(fields),
            _ => Ok(serde_json::Map::new()),
        },
        None => Ok(serde_json::Map::new()),
    }
}

fn json_of(value: &Dynamic, what: &str) -> ScriptResult<Value> {
    rhai::serde::from_dynamic::<Value>(value).or_else(|e| script_error(format!("{what} cannot be sent as JSON: {e}")))
}

fn strings(value: Dynamic, what: &str) -> ScriptResult<Vec<String>> {
    if let Some(text) = value.clone().try_cast::<String>() {
        return Ok(vec![text]);
    }
    let Some(items) = value.try_cast::<Array>() else {
        return script_error(format!("{what} must be a string or a list of strings"));
    };
    items.into_iter().map(|item| Ok(text_of(&item))).collect()
}

/// A string as it is; anything else as its JSON text.
fn text_of(value: &Dynamic) -> String {
    match value.clone().try_cast::<String>() {
        Some(text) => text,
        None => {
            rhai::serde::from_dynamic::<Value>(value).map(|json| json.to_string()).unwrap_or_else(|_| value.to_string())
        }
    }
}

/// `tool_results: ["result of the first call", #{ tool_call_id: "call_1", content: ".." }]`
fn tool_results(items: Array) -> ScriptResult<Vec<ToolResult>> {
    let mut results = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let result = match item.clone().try_cast::<Map>() {
            Some(map) => {
                let id = map.get("tool_call_id").or_else(|| map.get("id")).map(|id| id.to_string());
                let Some(content) = map.get("content") else {
                    return script_error(format!("chat: tool_results[{i}] needs `content`"));
                };
                ToolResult { tool_call_id: id, content: text_of(content) }
            }
            None => ToolResult { tool_call_id: None, content: text_of(&item) },
        };
        results.push(result);
    }
    Ok(results)
}

/// A step's answer as the function reads it (`answers.rs`).
fn answered(result: Result<Result<StepAnswer, String>, PhaseOver>, tag: String) -> ScriptResult<Dynamic> {
    match phase_goes_on(result)? {
        Ok(answer) => Ok(Dynamic::from(Answer::new(answer, tag))),
        Err(why) => script_error(why),
    }
}
