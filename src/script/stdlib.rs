//! The stdlib embedded in the binary: `import "aiperf/<name>"` loads stdlib/<name>.rhai.

use rhai::{Engine, EvalAltResult, Module, Position, Shared};

const PREFIX: &str = "aiperf/";

/// The embedded stdlib: (import path without the prefix, source).
const MODULES: &[(&str, &str)] = &[
    ("datasets", include_str!("../../stdlib/datasets.rhai")),
    ("dynamo", include_str!("../../stdlib/dynamo.rhai")),
    ("llamacpp", include_str!("../../stdlib/llamacpp.rhai")),
    ("mock", include_str!("../../stdlib/mock.rhai")),
    ("search", include_str!("../../stdlib/search.rhai")),
    ("sglang", include_str!("../../stdlib/sglang.rhai")),
    ("slos", include_str!("../../stdlib/slos.rhai")),
    ("sweeps", include_str!("../../stdlib/sweeps.rhai")),
    ("triton", include_str!("../../stdlib/triton.rhai")),
    ("trtllm", include_str!("../../stdlib/trtllm.rhai")),
    ("vllm", include_str!("../../stdlib/vllm.rhai")),
];

/// The stdlib module `path` (an `aiperf/…` path) names, or an error listing the modules there
/// are.
pub fn resolve(engine: &Engine, path: &str, position: Position) -> Result<Shared<Module>, Box<EvalAltResult>> {
    let name = path.strip_prefix(PREFIX).unwrap_or(path);
    let Some((_, text)) = MODULES.iter().find(|(module, _)| *module == name) else {
        let known: Vec<String> = MODULES.iter().map(|(module, _)| format!("{PREFIX}{module}")).collect();
        let message = format!("no stdlib module `{path}`; the stdlib has {}", known.join(", "));
        return Err(Box::new(EvalAltResult::ErrorRuntime(message.into(), position)));
    };
    load(engine, name, text)
}

/// Whether `import "<path>"` names a stdlib module (`aiperf/…`).
pub fn is_stdlib(path: &str) -> bool {
    path.starts_with(PREFIX)
}

fn load(engine: &Engine, name: &str, text: &str) -> Result<Shared<Module>, Box<EvalAltResult>> {
    let mut ast = engine.compile(text)?;
    ast.set_source(format!("stdlib/{name}.rhai"));
    let module = Module::eval_ast_as_new(rhai::Scope::new(), &ast, engine)?;
    Ok(Shared::new(module))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_stdlib_module_compiles() {
        let engine = rhai::Engine::new();
        for (name, text) in super::MODULES {
            engine.compile(*text).unwrap_or_else(|e| panic!("stdlib/{name}.rhai: {e}"));
        }
    }
}
