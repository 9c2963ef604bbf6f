//! `log(message)` writes a line to stderr tagged with the scenario's file:line, and
//! `fail(message)` stops the scenario with a script error at the call.

use rhai::{Dynamic, Engine, NativeCallContext};

use super::keys::{ScriptResult, script_error};

pub fn register(engine: &mut Engine) {
    engine.register_fn("log", |context: NativeCallContext, message: &str| eprintln!("{}", log_line(&context, message)));
    engine.register_fn("fail", |message: Dynamic| -> ScriptResult<()> { script_error(message.to_string()) });
}

/// `[log scenario.rhai:12] message`
fn log_line(context: &NativeCallContext, message: &str) -> String {
    let line = context.call_position().line().map(|line| format!(":{line}")).unwrap_or_default();
    format!("[log {}{line}] {message}", context.call_source().unwrap_or("script"))
}
