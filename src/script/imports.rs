//! Where `import "…"` finds a module: `aiperf/<name>` in the stdlib embedded in the binary;
//! `<library>/<module>` in a library of the scenario's `aiperf.lock` (libs/); any other path
//! next to the importing file, then in each folder of the search path (`--lib` folders, then
//! those of AIPERF_PATH), the first that has it. A module is evaluated once, at its first
//! import; later imports of the same file (a session function's, say) share it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};

use super::stdlib;
use crate::libs::ScenarioLibraries;

const EXTENSION: &str = "rhai";

/// The modules a scenario's imports evaluated, by the stdlib path or the file they came from.
/// The session functions look here for a closure a module made, whose function is the module's.
#[derive(Default)]
pub struct LoadedModules(Mutex<HashMap<String, Shared<Module>>>);

impl LoadedModules {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Shared<Module>>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The module named `key`: the one evaluated before, else `load`'s, kept if it loaded.
    fn once(
        &self,
        key: String,
        load: impl FnOnce() -> Result<Shared<Module>, Box<EvalAltResult>>,
    ) -> Result<Shared<Module>, Box<EvalAltResult>> {
        if let Some(module) = self.lock().get(&key) {
            return Ok(module.clone());
        }
        // Evaluated without the lock: a module may import others.
        let module = load()?;
        Ok(self.lock().entry(key).or_insert(module).clone())
    }

    /// The loaded module that defines the script function `name` (a closure's `anon$…`).
    pub fn defining(&self, name: &str) -> Option<Shared<Module>> {
        self.lock()
            .values()
            .find(|module| module.iter_script_fn_info().any(|(_, _, defined, ..)| defined == name))
            .cloned()
    }
}

pub struct ImportResolver {
    search_path: Vec<PathBuf>,
    libraries: Arc<ScenarioLibraries>,
    loaded: Arc<LoadedModules>,
}

impl ImportResolver {
    pub fn new(search_path: Vec<PathBuf>, libraries: Arc<ScenarioLibraries>, loaded: Arc<LoadedModules>) -> Self {
        Self { search_path, libraries, loaded }
    }

    /// The files `import "<path>"` may mean, in the order they are tried.
    fn candidates(&self, importer: Option<&str>, path: &str) -> Vec<PathBuf> {
        let file = Path::new(path).with_extension(EXTENSION);
        if file.is_absolute() {
            return vec![file];
        }
        let importer_dir = importer.map(|source| Path::new(source).parent().unwrap_or(Path::new("")).to_path_buf());
        importer_dir.iter().chain(&self.search_path).map(|dir| dir.join(&file)).collect()
    }
}

impl ModuleResolver for ImportResolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
        path: &str,
        position: Position,
    ) -> Result<Shared<Module>, Box<EvalAltResult>> {
        if stdlib::is_stdlib(path) {
            return self.loaded.once(path.to_string(), || stdlib::resolve(engine, path, position));
        }
        let file = match self.libraries.module_file(source, path) {
            Some(found) => found,
            None => self.search(source, path),
        }
        .map_err(|message| Box::new(EvalAltResult::ErrorRuntime(message.into(), position)))?;
        let name = file.display().to_string();
        self.loaded.once(name.clone(), || {
            load(engine, &file).map_err(|error| Box::new(EvalAltResult::ErrorInModule(name, error, position)))
        })
    }
}

impl ImportResolver {
    /// The first of the folders that has the module, or a message listing every place looked in.
    fn search(&self, importer: Option<&str>, path: &str) -> Result<PathBuf, String> {
        let candidates = self.candidates(importer, path);
        match candidates.iter().find(|candidate| candidate.is_file()) {
            Some(file) => Ok(file.clone()),
            None => {
                let searched: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
                Err(format!(
                    "module `{path}` not found; looked for {} (add folders with --lib DIR or AIPERF_PATH, or a library to aiperf.toml)",
                    searched.join(", ")
                ))
            }
        }
    }
}

/// Compile and evaluate the module in `file`; its errors name the file.
fn load(engine: &Engine, file: &Path) -> Result<Shared<Module>, Box<EvalAltResult>> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Box::new(EvalAltResult::ErrorRuntime(format!("cannot read the module: {e}").into(), Position::NONE))
    })?;
    let mut ast = engine.compile(text)?;
    ast.set_source(file.display().to_string());
    Ok(Shared::new(Module::eval_ast_as_new(Scope::new(), &ast, engine)?))
}
