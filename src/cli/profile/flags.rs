//! The shape of `aiperf profile`'s flag tables: each AIPerf flag, its aliases, how many values
//! it takes, and what it does to the document the flags build (or why it is only noted, or
//! refused). The tables themselves are in the group files next to this one.

use serde_json::Value;

use super::document::FlagDocument;

/// One help-panel group of AIPerf's `aiperf profile --help`.
pub struct Group {
    pub title: &'static str,
    pub flags: &'static [Flag],
}

pub struct Flag {
    /// The flag's name first, then its aliases, as AIPerf spells them.
    pub names: &'static [&'static str],
    pub arity: Arity,
    pub action: Action,
    /// One line for `--help`.
    pub help: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// No value (`--streaming`); `--flag=false` turns a boolean off.
    Switch,
    /// One value: `--flag VALUE` or `--flag=VALUE`.
    One,
    /// Values up to the next flag: `--extra-inputs a:1 b:2`, repeatable.
    Many,
}

/// How a value is read from the command line.
#[derive(Clone, Copy)]
pub enum Kind {
    Text,
    Int,
    Float,
    Bool,
    /// One of AIPerf's choices (hyphens or underscores) → the document's spelling.
    Choice(&'static [(&'static str, &'static str)]),
}

pub type Apply = fn(&mut FlagDocument, &str, &[String]) -> Result<(), String>;

pub enum Action {
    /// Set this document path (from the root, dotted; `phases.profiling` names an item).
    Set(&'static str, Kind),
    /// Set this path of `benchmark`; a comma-separated list sweeps it (`--concurrency 1,2,4`).
    Sweep(&'static str, Kind),
    /// Set this path to a fixed JSON value (`--no-server-metrics` → `false`).
    Fixed(&'static str, &'static str),
    /// Anything more involved: pairs, lists, derived keys.
    Apply(Apply),
    /// Accepted with this one-line note on stderr: it has no meaning here.
    Note(&'static str),
    /// Steers the command itself (`--config`, `--dry-run`, `--emit-scenario`, `--help`).
    Command,
}

/// What a switch given as `name` says: on, or the value given (`--flag=false`), turned over
/// by its `--no-` form.
pub fn switch_value(name: &str, values: &[String]) -> Result<bool, String> {
    let on = match values.first() {
        Some(value) => Kind::Bool.read(value)? == serde_json::Value::Bool(true),
        None => true,
    };
    Ok(on != name.starts_with("--no-"))
}

pub const fn set(names: &'static [&'static str], path: &'static str, kind: Kind, help: &'static str) -> Flag {
    let arity = if matches!(kind, Kind::Bool) { Arity::Switch } else { Arity::One };
    Flag { names, arity, action: Action::Set(path, kind), help }
}

pub const fn sweep(names: &'static [&'static str], path: &'static str, kind: Kind, help: &'static str) -> Flag {
    Flag { names, arity: Arity::One, action: Action::Sweep(path, kind), help }
}

pub const fn fixed(names: &'static [&'static str], path: &'static str, json: &'static str, help: &'static str) -> Flag {
    Flag { names, arity: Arity::Switch, action: Action::Fixed(path, json), help }
}

pub const fn apply(names: &'static [&'static str], arity: Arity, apply: Apply, help: &'static str) -> Flag {
    Flag { names, arity, action: Action::Apply(apply), help }
}

/// A flag that takes `arity` values and only earns a note.
pub const fn note(names: &'static [&'static str], arity: Arity, why: &'static str) -> Flag {
    Flag { names, arity, action: Action::Note(why), help: why }
}

pub const fn command(names: &'static [&'static str], arity: Arity, help: &'static str) -> Flag {
    Flag { names, arity, action: Action::Command, help }
}

impl Kind {
    /// The value as the document holds it; the message says what was expected.
    pub fn read(self, text: &str) -> Result<Value, String> {
        let text = text.trim();
        match self {
            Kind::Text => Ok(Value::String(text.to_string())),
            Kind::Int => text.parse::<i64>().map(Value::from).map_err(|_| format!("expects an integer, got `{text}`")),
            Kind::Float => match text.parse::<f64>() {
                Ok(number) if number.is_finite() => Ok(Value::from(number)),
                _ => Err(format!("expects a number, got `{text}`")),
            },
            Kind::Bool => match text.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Ok(Value::Bool(true)),
                "false" | "0" | "no" => Ok(Value::Bool(false)),
                _ => Err(format!("expects true or false, got `{text}`")),
            },
            Kind::Choice(choices) => {
                // Hyphens or underscores, and AIPerf's own names (`speed_bench_throughput_1k`)
                // beside its command line's (`speed-bench-throughput-1-k`).
                let key = |name: &str| name.to_ascii_lowercase().replace(['-', '_'], "");
                let wanted = key(text);
                match choices.iter().find(|(name, _)| key(name) == wanted) {
                    Some((_, value)) => Ok(Value::String((*value).to_string())),
                    None => {
                        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
                        Err(format!("expects one of {}, got `{text}`", names.join(", ")))
                    }
                }
            }
        }
    }
}
