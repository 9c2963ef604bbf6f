//! The command line of `aiperf profile` read against the flag tables: every flag looked up by
//! name or alias (an unknown one is an error with a did-you-mean), its values taken, and its
//! action applied to the flags' document.

use std::collections::HashMap;
use std::path::PathBuf;

use super::document::FlagDocument;
use super::flags::{Action, Arity, Flag, Kind, switch_value};
use super::groups::GROUPS;
use crate::suggest::closest;

/// What the command line asks for besides the document.
#[derive(Debug, Default)]
pub struct ProfileCommand {
    pub flags: FlagDocument,
    /// `--config FILE`: the config file the flags lay over.
    pub config: Option<PathBuf>,
    /// `--emit-scenario FILE`: write the equivalent Rhai scenario.
    pub emit_scenario: Option<PathBuf>,
    /// `--metrics-listen ADDRESS`: serve live metrics there during each run.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--dry-run`: print the plans, send nothing.
    pub dry_run: bool,
    /// `--no-fixed-schedule`: a trace with timestamps keeps the chosen timing mode.
    pub no_fixed_schedule: bool,
    /// `--help`.
    pub help: bool,
}

/// Every flag by each of its names.
fn index() -> HashMap<&'static str, &'static Flag> {
    GROUPS
        .iter()
        .flat_map(|group| group.flags.iter())
        .flat_map(|flag| flag.names.iter().map(move |name| (*name, flag)))
        .collect()
}

pub fn parse(args: &[String]) -> Result<ProfileCommand, String> {
    let flags = index();
    let mut command = ProfileCommand::default();
    // `--arrival-pattern` given: `--arrival-smoothness` then does not choose the pattern itself.
    let mut pattern_given = false;
    let mut at = 0;
    while at < args.len() {
        let token = &args[at];
        at += 1;
        let (name, inline) = match token.split_once('=') {
            Some((name, value)) if name.starts_with('-') => (name, Some(value.to_string())),
            _ => (token.as_str(), None),
        };
        if !name.starts_with('-') {
            return Err(format!(
                "unexpected argument `{token}`: aiperf profile takes only flags (see aiperf profile --help)"
            ));
        }
        let Some(flag) = flags.get(name) else {
            let names: Vec<&str> = flags.keys().copied().collect();
            let hint = closest(name, &names).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
            return Err(format!("unknown flag `{name}`{hint}; see aiperf profile --help"));
        };
        let values = match flag.arity {
            Arity::Switch => inline.into_iter().collect::<Vec<_>>(),
            Arity::One => match inline {
                Some(value) => vec![value],
                None if at < args.len() && !is_flag(&args[at], &flags) => {
                    at += 1;
                    vec![args[at - 1].clone()]
                }
                None => return Err(format!("{name} needs a value")),
            },
            Arity::Many => {
                let mut values: Vec<String> = inline.into_iter().collect();
                while at < args.len() && !is_flag(&args[at], &flags) {
                    values.push(args[at].clone());
                    at += 1;
                }
                values
            }
        };
        pattern_given |= flag.names.contains(&"--arrival-pattern");
        apply(&mut command, flag, name, &values).map_err(|why| format!("{name}: {why}"))?;
    }
    if command.config.is_none() {
        super::resolve::smoothness_pattern(&mut command.flags, pattern_given)?;
        super::resolve::unqualified_notes(&mut command.flags);
        super::dataset::no_synthetic_only_flags(&command.flags)?;
    }
    super::resolve::warmup_ramps(&mut command.flags, command.config.is_some())?;
    if command.config.is_none() {
        super::resolve::warmup_pattern(&mut command.flags);
    }
    super::variants::expand(&mut command.flags, &|args| parse(args).map(|nested| nested.flags.finish()))?;
    Ok(command)
}

/// A token that starts the next flag rather than being a value (`-5` is a value).
fn is_flag(token: &str, flags: &HashMap<&'static str, &'static Flag>) -> bool {
    let name = token.split_once('=').map_or(token, |(name, _)| name);
    token.starts_with("--") || flags.contains_key(name)
}

fn apply(command: &mut ProfileCommand, flag: &Flag, name: &str, values: &[String]) -> Result<(), String> {
    let document = &mut command.flags;
    let one = || values.first().map(String::as_str).unwrap_or("true");
    match &flag.action {
        Action::Set(path, Kind::Bool) => document.set(path, serde_json::Value::Bool(switch_value(name, values)?)),
        Action::Set(path, kind) => document.set(path, kind.read(one())?),
        Action::Sweep(path, kind) => document.set_or_sweep(path, one(), |part| kind.read(part))?,
        Action::Fixed(path, json) => {
            let value = serde_json::from_str(json).map_err(|e| format!("bad table value {json}: {e}"))?;
            if values.is_empty() || Kind::Bool.read(one())? == serde_json::Value::Bool(true) {
                document.set(path, value);
            }
        }
        Action::Apply(apply) => apply(document, name, values)?,
        Action::Note(why) => document.notes.push(format!("note: {name} has no effect here: {why}")),
        Action::Command => {}
    }
    match flag.names[0] {
        "--config" => command.config = Some(PathBuf::from(one())),
        "--emit-scenario" => command.emit_scenario = Some(PathBuf::from(one())),
        "--metrics-listen" => command.metrics_listen = Some(crate::live::listen_address(one())?),
        "--dry-run" => command.dry_run = true,
        "--no-fixed-schedule" => command.no_fixed_schedule = true,
        "--help" => command.help = true,
        _ => {}
    }
    Ok(())
}
