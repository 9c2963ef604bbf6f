//! A hint for Rhai's errors about a name it cannot serve: a property no getter reads, a
//! function no signature matches: the nearest name the engine or the script knows ("did you
//! mean"), a method read as a property or a property called as a method; for `lib::name`, the
//! nearest of the functions of the module the script imported as `lib`, and for a bare name one
//! of those modules has, that it is there. A function the script or aiperf has, called with other
//! arguments, gets what it takes. A property's nearest name is sought among aiperf's own (it may
//! be another of its types'). A `()` read or passed where a value was wanted says where one
//! comes from.
//! Computed only when such an error is reported.

use rhai::{AST, ASTNode, Engine, EvalAltResult, Expr, FnAccess, Module, Position, Shared, Stmt};

use super::type_names;
use crate::suggest::typo_of;

/// A function the engine knows: its name (`get$x` for the getter of property `x`), how many
/// parameters it takes, and (for aiperf's and the script's own, not the standard library's)
/// what: `(Session, f64)`, `(calls)`.
struct Known {
    name: String,
    params: usize,
    takes: Option<String>,
}

/// The hint for `error`, if it is about a name and one helps; `ast` is the script's, whose own
/// functions (`fn answer(calls)`) are known names too.
pub fn for_error(error: &EvalAltResult, engine: &Engine, ast: &AST) -> Option<String> {
    match error {
        // Only aiperf's own properties and methods: the standard library's (`len`, `keys`, ..)
        // would be offered for values of other types.
        EvalAltResult::ErrorDotExpr(message, _) => {
            let property = unknown_property(message)?;
            if message.ends_with("for type '()'") {
                return Some(format!("the value before `.{property}` is `()`: {UNIT_IS}"));
            }
            property_hint(property, &known_functions(engine, false))
        }
        EvalAltResult::ErrorFunctionNotFound(call, at) => {
            let (name, given) = call.split_once(" (").unwrap_or((call.as_str(), ""));
            let hint = name_hint(name, *at, engine, ast);
            // Rhai lists the arguments' types: `(map, ())`.
            let given = given.strip_suffix(')').unwrap_or(given);
            let given_unit = given.split(", ").any(|given| given == "()");
            match (hint, given_unit) {
                (Some(hint), true) => Some(format!("{hint}; a value it was given is `()`: {UNIT_IS}")),
                (None, true) => Some(format!("a value it was given is `()`: {UNIT_IS}")),
                (hint, false) => hint,
            }
        }
        _ => None,
    }
}

/// Where a `()` comes from when a script did not mean one, most often.
const UNIT_IS: &str = "what a map gives for a key it lacks";

/// The hint for a call of `name` that no function of that name and arguments serves.
fn name_hint(name: &str, at: Position, engine: &Engine, ast: &AST) -> Option<String> {
    if let Some((alias, name)) = name.rsplit_once("::") {
        return module_function_hint(alias, name, engine, ast);
    }
    let mut known = known_functions(engine, true);
    known.extend(ast.iter_functions().map(|f| Known {
        name: f.name.to_string(),
        params: f.params.len(),
        takes: Some(format!("({})", f.params.join(", "))),
    }));
    function_hint(name, &known).or_else(|| imported_elsewhere(name, at, engine, ast))
}

/// `import "<path>" as <alias>` in the script (or without `as`).
struct Import {
    path: String,
    alias: Option<String>,
    /// A statement of the script's top level, not of a function or a block.
    top_level: bool,
    at: Position,
}

/// The script's imports of a constant path.
fn imports(ast: &AST) -> Vec<Import> {
    let top_level: Vec<Position> = ast.statements().iter().map(Stmt::position).collect();
    let mut found = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        if let Some(ASTNode::Stmt(Stmt::Import(import, at))) = path.last()
            && let (Expr::StringConstant(module, _), alias) = &**import
        {
            let alias = (!alias.name.is_empty()).then(|| alias.name.to_string());
            found.push(Import { path: module.to_string(), alias, top_level: top_level.contains(at), at: *at });
        }
        true
    });
    found
}

/// The module `import` brings in, from the engine's resolver: one the script has imported
/// already, so the resolver gives back the module it evaluated then.
fn module_of(import: &Import, engine: &Engine, ast: &AST) -> Option<Shared<Module>> {
    engine.module_resolver().resolve(engine, ast.source(), &import.path, import.at).ok()
}

/// The public functions of `module`, not the closures it made (Rhai names them `anon$…`).
fn module_functions(module: &Module) -> Vec<Known> {
    module
        .iter_script_fn_info()
        .filter(|(_, access, name, ..)| {
            *access == FnAccess::Public && !name.starts_with(super::module_closures::CLOSURE_PREFIX)
        })
        .map(|(_, _, name, params, f)| Known {
            name: name.to_string(),
            params,
            takes: Some(format!("({})", f.params.join(", "))),
        })
        .collect()
}

/// `alias::name` names no function of the module imported as `alias`: the nearest that does.
/// (Rhai found the module, so its import has run.)
fn module_function_hint(alias: &str, name: &str, engine: &Engine, ast: &AST) -> Option<String> {
    let import = imports(ast).into_iter().find(|import| import.alias.as_deref() == Some(alias))?;
    let known = module_functions(&*module_of(&import, engine, ast)?);
    function_hint(name, &known).map(|hint| hint.replacen('`', &format!("`{alias}::"), 1))
}

/// A bare `name` that a module the script imported (at its top level, before the call) has:
/// how to call it, and how to import the module under a name where it has none.
fn imported_elsewhere(name: &str, at: Position, engine: &Engine, ast: &AST) -> Option<String> {
    imports(ast).into_iter().filter(|import| import.top_level && import.at < at).find_map(|import| {
        let module = module_of(&import, engine, ast)?;
        let known = module_functions(&module);
        let params = known.iter().find(|k| k.name == name)?.params;
        let arguments = if params == 0 { "()" } else { "(..)" };
        Some(match &import.alias {
            Some(alias) => format!("`{name}` is in module `{alias}`: `{alias}::{name}{arguments}`"),
            None => {
                let (path, alias) = (&import.path, alias_for(&import.path));
                format!("`{name}` is in module \"{path}\", imported without a name: `import \"{path}\" as {alias};` then `{alias}::{name}{arguments}`")
            }
        })
    })
}

/// A name to import the module at `path` as: its file's name, as an identifier.
fn alias_for(path: &str) -> String {
    let stem = std::path::Path::new(path).file_stem().map_or(path.into(), |stem| stem.to_string_lossy());
    let alias: String = stem.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
    if is_identifier(&alias) { alias } else { format!("m_{alias}") }
}

/// The property of Rhai's "Unknown property 'x' - a getter is not registered for type 'T'".
fn unknown_property(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("Unknown property '")?;
    Some(rest.split_once('\'')?.0)
}

fn property_hint(property: &str, known: &[Known]) -> Option<String> {
    let properties = sorted_names(known.iter().filter_map(|k| k.name.strip_prefix("get$")));
    let methods = sorted_names(known.iter().filter(|k| k.params > 0).map(|k| k.name.as_str()));
    if methods.contains(&property) {
        let bare = known.iter().any(|k| k.name == property && k.params == 1);
        let call = if bare { "()" } else { "(..)" };
        return Some(format!("`{property}` is a method: `.{property}{call}`"));
    }
    if properties.contains(&property) {
        // Another type's property: no nearer name to offer.
        return None;
    }
    if let Some(near) = typo_of(property, &properties) {
        return Some(format!("did you mean `.{near}`?"));
    }
    typo_of(property, &methods).map(|near| format!("did you mean the method `.{near}(..)`?"))
}

fn function_hint(name: &str, known: &[Known]) -> Option<String> {
    let same_name: Vec<&Known> = known.iter().filter(|k| k.name == name).collect();
    if !same_name.is_empty() {
        // A known function, called with other arguments (Rhai's message shows them): what it
        // takes, unless an overload cannot say (the standard library's: it has many).
        return takes_hint(name, &same_name);
    }
    let getter = format!("get${name}");
    if known.iter().any(|k| k.name == getter) {
        return Some(format!("`{name}` is a property: `.{name}`"));
    }
    let names = sorted_names(known.iter().map(|k| k.name.as_str()));
    typo_of(name, &names).map(|near| format!("did you mean `{near}`?"))
}

/// The most overloads a hint lists.
const MAX_LISTED_OVERLOADS: usize = 4;

/// "`name` takes (Session, f64) or (Session, i64)": its overloads, distinct and sorted.
fn takes_hint(name: &str, overloads: &[&Known]) -> Option<String> {
    let mut takes: Vec<&str> = Vec::new();
    for overload in overloads {
        let each = overload.takes.as_deref()?;
        if !takes.contains(&each) {
            takes.push(each);
        }
    }
    // The engine keeps its functions in a hash map: sorted, the hint reads the same every time.
    takes.sort_unstable();
    let listed = takes.len().min(MAX_LISTED_OVERLOADS);
    let mut list = match &takes[..listed] {
        [only] => only.to_string(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
        [] => return None,
    };
    if takes.len() > listed {
        list.push_str(&format!(" (and {} more)", takes.len() - listed));
    }
    Some(format!("`{name}` takes {list}"))
}

/// The distinct identifiers among `names`, sorted.
fn sorted_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut names: Vec<&str> = names.filter(|name| is_identifier(name)).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn is_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The functions registered on the engine (with what they take), and with `standard` the
/// standard library's too.
fn known_functions(engine: &Engine, standard: bool) -> Vec<Known> {
    let own = engine.collect_fn_metadata(
        None,
        |info| {
            let takes: Option<Vec<&str>> = info.metadata.param_types.iter().map(|id| type_names::of(*id)).collect();
            let known = Known {
                name: info.metadata.name.to_string(),
                params: info.metadata.num_params,
                takes: takes.map(|takes| format!("({})", takes.join(", "))),
            };
            Some((info.metadata.hash, known))
        },
        false,
    );
    let own_hashes: std::collections::HashSet<u64> = own.iter().map(|(hash, _)| *hash).collect();
    let mut known: Vec<Known> = own.into_iter().map(|(_, known)| known).collect();
    if standard {
        known.extend(engine.collect_fn_metadata(
            None,
            |info| {
                (!own_hashes.contains(&info.metadata.hash)).then(|| Known {
                    name: info.metadata.name.to_string(),
                    params: info.metadata.num_params,
                    takes: None,
                })
            },
            true,
        ));
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Results;

    fn engine() -> Engine {
        let mut engine = Engine::new();
        engine.register_type_with_name::<Results>("Results");
        engine.register_get("request_count", |_: &mut Results| 1_i64);
        engine.register_get("duration", |_: &mut Results| 1.0_f64);
        engine.register_fn("phases", |_: &mut Results| rhai::Array::new());
        engine.register_fn("metric", |_: &mut Results, _: &str| 1_i64);
        engine.register_fn("results", || Results);
        engine.register_fn("wait", |_: &mut Results, _: f64| ());
        engine.register_fn("wait", |_: &mut Results, _: i64| ());
        engine.register_fn("pause", |_: f64| ());
        engine.register_fn("pause", |_: i64| ());
        engine
    }

    fn hint(script: &str) -> Option<String> {
        let engine = engine();
        let ast = engine.compile(script).expect("the script compiles");
        let error = engine.eval_ast::<rhai::Dynamic>(&ast).expect_err("the script fails");
        for_error(&error, &engine, &ast)
    }

    #[test]
    fn a_misspelt_property_gets_the_nearest_and_a_method_read_as_one_says_so() {
        assert_eq!(hint("results().requst_count").as_deref(), Some("did you mean `.request_count`?"));
        assert_eq!(hint("results().phases").as_deref(), Some("`phases` is a method: `.phases()`"));
        assert_eq!(hint("results().metrc").as_deref(), Some("did you mean the method `.metric(..)`?"));
        assert_eq!(hint("results().banana"), None);
        assert_eq!(hint("results().lenn"), None, "the standard library's `len` is not offered for aiperf's types");
    }

    #[test]
    fn a_misspelt_function_gets_the_nearest_name() {
        assert_eq!(hint("results().metrc(\"x\")").as_deref(), Some("did you mean `metric`?"));
        assert_eq!(hint("reslts()").as_deref(), Some("did you mean `results`?"));
        assert_eq!(hint("results().xyzzy_plugh()"), None);
        assert_eq!(
            hint("results().request_count()").as_deref(),
            Some("`request_count` is a property: `.request_count`")
        );
        let script_function = "fn answer(calls) { calls } answr([])";
        assert_eq!(hint(script_function).as_deref(), Some("did you mean `answer`?"), "the script's own function");
    }

    #[test]
    fn a_known_function_called_with_other_arguments_gets_what_it_takes() {
        assert_eq!(hint("pause(\"3\")").as_deref(), Some("`pause` takes (f64) or (i64)"));
        assert_eq!(hint("results().wait(\"3\")"), None, "a parameter of a type no scenario knows by name");
        assert_eq!(
            hint("fn answer(calls, limit) { calls } answer([])").as_deref(),
            Some("`answer` takes (calls, limit)")
        );
        assert_eq!(hint("len(1, 2, 3)"), None, "the standard library's overloads are not listed");
    }

    #[test]
    fn at_most_four_overloads_are_listed() {
        let overload = |takes: &str| Known { name: "f".into(), params: 1, takes: Some(takes.into()) };
        let known: Vec<Known> = ["(i64)", "(f64)", "(string)", "(map)", "(array)", "(i64)"].map(overload).into();
        let overloads: Vec<&Known> = known.iter().collect();
        assert_eq!(
            takes_hint("f", &overloads).as_deref(),
            Some("`f` takes (array), (f64), (i64) or (map) (and 1 more)")
        );
    }

    #[test]
    fn an_imported_modules_functions_are_known_names() {
        let mut engine = engine();
        let library = engine.compile("fn greet(name) { name } fn wave() { 1 } private fn hidden() { 2 }").unwrap();
        let module = Module::eval_ast_as_new(rhai::Scope::new(), &library, &engine).unwrap();
        let mut resolver = rhai::module_resolvers::StaticModuleResolver::new();
        resolver.insert("lib", module);
        engine.set_module_resolver(resolver);
        let hint = |script: &str| {
            let ast = engine.compile(script).expect("the script compiles");
            let error = engine.eval_ast::<rhai::Dynamic>(&ast).expect_err("the script fails");
            for_error(&error, &engine, &ast)
        };
        assert_eq!(hint("import \"lib\" as lib; lib::gret(1)").as_deref(), Some("did you mean `lib::greet`?"));
        assert_eq!(hint("import \"lib\" as lib; lib::hiden()"), None, "a private function is not offered");
        assert_eq!(hint("import \"lib\" as lib; lib::greet()").as_deref(), Some("`lib::greet` takes (name)"));
        assert_eq!(hint("import \"lib\" as lib; wave()").as_deref(), Some("`wave` is in module `lib`: `lib::wave()`"));
        assert_eq!(hint("wave(); import \"lib\" as lib;"), None, "an import after the call");
        assert_eq!(hint("fn f() { import \"lib\" as lib; } greet(1)"), None, "an import inside a function");
        assert_eq!(
            hint("import \"lib\"; greet(1)").as_deref(),
            Some(
                "`greet` is in module \"lib\", imported without a name: `import \"lib\" as lib;` then `lib::greet(..)`"
            )
        );
    }

    #[test]
    fn a_unit_where_a_value_was_wanted_is_named_with_where_it_comes_from() {
        assert_eq!(
            hint("let c = #{ name: \"search\" }; c.fnction.name").as_deref(),
            Some("the value before `.name` is `()`: what a map gives for a key it lacks")
        );
        assert_eq!(
            hint("let r = #{}; r.tool_call.len()").as_deref(),
            Some("a value it was given is `()`: what a map gives for a key it lacks")
        );
        assert_eq!(
            hint("let r = #{}; pause(r.seconds)").as_deref(),
            Some("`pause` takes (f64) or (i64); a value it was given is `()`: what a map gives for a key it lacks")
        );
    }

    #[test]
    fn other_errors_get_no_hint() {
        assert_eq!(hint("throw \"no\""), None);
    }
}
