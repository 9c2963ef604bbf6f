//! `s.parallel([|a| .., |a| ..])`: sub-agents that run at once. Each function gets a sub-agent
//! of its own (as `s.sub_agent()` gives) and runs on a coroutine of its own beside its
//! session's, on the same script worker (`agents/scripted/fibers.rs`), so their steps are in
//! flight together (`s.parallel(list, 4)`: four at a time, each of the rest starting as one
//! ends); the call returns what each function returned, in their order, once the last has
//! ended, or else the first one's error.

use std::any::Any;
use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, FnPtr, NativeCallContext};

use super::keys::{ScriptResult, script_error};
use super::sessions::{SessionFunctions, phase_goes_on};
use crate::agents::scripted::{ChildBody, PhaseOver, Session, pause_on_children};

/// What a sub-agent's function ended with.
type Ended = Result<Dynamic, Box<EvalAltResult>>;

pub fn register(engine: &mut Engine, functions: Arc<SessionFunctions>) {
    let all_at_once = functions.clone();
    engine.register_fn("parallel", move |context: NativeCallContext, s: &mut Session, agents: Array| {
        parallel(&context, s, agents, usize::MAX, &all_at_once)
    });
    engine.register_fn("parallel", move |context: NativeCallContext, s: &mut Session, agents: Array, at_once: i64| {
        match usize::try_from(at_once) {
            Ok(at_once) if at_once >= 1 => parallel(&context, s, agents, at_once, &functions),
            _ => script_error(format!("s.parallel: {at_once} at once? give 1 or more")),
        }
    });
}

fn parallel(
    context: &NativeCallContext,
    s: &Session,
    agents: Array,
    at_once: usize,
    functions: &SessionFunctions,
) -> ScriptResult<Array> {
    let mut chosen = Vec::with_capacity(agents.len());
    for (i, agent) in agents.into_iter().enumerate() {
        let type_name = agent.type_name();
        match agent.try_cast::<FnPtr>() {
            Some(function) => {
                let takes = functions.home(&function).map(|(_, takes)| takes).unwrap_or_default();
                if let Some(first) = takes.first()
                    && !takes.contains(&1)
                {
                    return script_error(format!(
                        "s.parallel: item {i} takes {first} parameters; each function takes one, its sub-agent: `|a| ..`"
                    ));
                }
                if function.curry().iter().any(|captured| holds_a_handle(captured, CAPTURE_DEPTH)) {
                    return script_error(format!(
                        "s.parallel: item {i} captured a session's handle (the session's `s`, or a sub-agent's) \
                         from around it; functions run at once must not share one: each uses only the sub-agent it \
                         is given, `|a| a.chat(..)`"
                    ));
                }
                chosen.push(function);
            }
            None => {
                return script_error(format!(
                    "s.parallel: item {i} is {type_name}, not a function of its sub-agent, e.g. `|a| a.chat(\"..\").text`"
                ));
            }
        }
    }
    let Some(engine) = functions.engine() else { return script_error("the scenario has ended") };
    // Each child calls its function as this call would, with the modules and functions seen here.
    #[allow(deprecated)] // "volatile", not deprecated
    let called_from = Arc::new(context.store_data());
    let mut bodies: Vec<ChildBody> = Vec::with_capacity(chosen.len());
    for function in chosen {
        let sub_agent = s.sub_agent().or_else(|why| script_error(why.replacen("s.sub_agent", "s.parallel", 1)))?;
        let (engine, called_from) = (engine.clone(), called_from.clone());
        bodies.push(Box::new(move || {
            #[allow(deprecated)]
            let context = NativeCallContext::from_stored_data(&engine, &called_from);
            let ended: Ended = function.call_within_context(&context, (sub_agent,));
            Box::new(ended) as Box<dyn Any + Send>
        }));
    }
    let outputs = phase_goes_on(pause_on_children(bodies, at_once).ok_or(PhaseOver))?;
    let mut results = Array::with_capacity(outputs.len());
    for (i, output) in outputs.into_iter().enumerate() {
        match output.map(|output| output.downcast::<Ended>()) {
            Some(Ok(ended)) => results.push((*ended)?),
            _ => {
                return script_error(format!(
                    "s.parallel: item {i}'s function ended without a value (it panicked, or the system refused it a stack)"
                ));
            }
        }
    }
    Ok(results)
}

/// How deep into captured lists, maps and closures a handle is looked for (a closure may capture
/// itself, through a variable it is assigned to).
const CAPTURE_DEPTH: u32 = 8;

/// Whether `value` is a session's handle, or holds one within `depth` levels.
fn holds_a_handle(value: &Dynamic, depth: u32) -> bool {
    if value.is::<Session>() {
        return true;
    }
    let Some(depth) = depth.checked_sub(1) else { return false };
    if let Some(items) = value.read_lock::<Array>() {
        return items.iter().any(|item| holds_a_handle(item, depth));
    }
    if let Some(fields) = value.read_lock::<rhai::Map>() {
        return fields.values().any(|field| holds_a_handle(field, depth));
    }
    if let Some(function) = value.read_lock::<FnPtr>() {
        return function.curry().iter().any(|captured| holds_a_handle(captured, depth));
    }
    false
}
