//! A closure a module made, called where the module's functions are not: `let f = lib::make();
//! f.call(x)` in a scenario. Rhai records a closure as the name of the function it defines and
//! looks that name up among the caller's functions, so the scenario's call finds none; the
//! engine's missing-function hook then calls it among the functions of the loaded module that
//! defines it (a function of the same name and number of arguments), as the module would. Only
//! closures: a module's named function called bare stays an error (with its hint).

use std::sync::Arc;

use rhai::{AST, Dynamic, Engine, FnPtr, NativeCallContext, Position};

use super::imports::LoadedModules;

/// How Rhai names the function a closure defines.
pub const CLOSURE_PREFIX: &str = "anon$";

/// Hook the engine so a call of a closure's function it cannot find goes to the imported module
/// that defines it; any other missing function stays the error Rhai gives.
pub fn register(engine: &mut Engine, modules: Arc<LoadedModules>) {
    #[allow(deprecated)] // Rhai marks the hook volatile, not deprecated.
    engine.on_missing_function(move |name, args, _is_method_call, context| {
        if !name.starts_with(CLOSURE_PREFIX) {
            return Ok(None);
        }
        let Some(module) = modules.defining(name) else { return Ok(None) };
        let definition = module
            .iter_script_fn_info()
            .find(|(_, _, defined, params, _)| *defined == name && *params == args.len())
            .map(|(.., definition)| definition.clone());
        let Some(definition) = definition else { return Ok(None) };
        let home = AST::new_from_module(module);
        let engine = context.engine();
        let mut global = engine.new_global_runtime_state();
        global.lib.push(home.shared_lib().clone());
        global.level = context.call_level();
        let call = NativeCallContext::new_with_all_fields(engine, name, None, &global, Position::NONE);
        let arguments: Vec<Dynamic> = args.iter().map(|argument| (**argument).clone()).collect();
        FnPtr::from(definition).call_raw(&call, None, arguments).map(Some)
    });
}
