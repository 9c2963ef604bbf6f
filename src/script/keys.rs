//! Reads a Rhai map for a builder (`endpoint(#{..})` and friends): typed getters, and an
//! error for every unknown key with a "did you mean" for near misses.

use rhai::{Dynamic, EvalAltResult, Map};

use crate::suggest::closest;

pub type ScriptResult<T> = Result<T, Box<EvalAltResult>>;

/// A runtime error for the script (Rhai fills in the position of the call).
pub fn script_error<T>(message: impl Into<String>) -> ScriptResult<T> {
    Err(Box::new(EvalAltResult::ErrorRuntime(Dynamic::from(message.into()), rhai::Position::NONE)))
}

pub struct MapReader {
    what: &'static str,
    map: Map,
    allowed: &'static [&'static str],
}

impl MapReader {
    /// `what` names the builder in messages; `allowed` lists every key it takes.
    pub fn new(what: &'static str, map: Map, allowed: &'static [&'static str]) -> ScriptResult<Self> {
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                let hint = match closest(key, allowed) {
                    Some(near) => format!(" (did you mean `{near}`?)"),
                    None => String::new(),
                };
                return script_error(format!("{what}: unknown key `{key}`{hint}; it takes {}", allowed.join(", ")));
            }
        }
        Ok(Self { what, map, allowed })
    }

    fn take(&mut self, key: &str) -> Option<Dynamic> {
        debug_assert!(self.allowed.contains(&key), "{} reads undeclared key {key}", self.what);
        self.find(key).filter(|v| !v.is_unit()).cloned()
    }

    /// The value at `key`, found by a scan: the maps are a few keys, and comparing their
    /// lengths first spares most string comparisons (this runs at every scripted step).
    fn find(&self, key: &str) -> Option<&Dynamic> {
        self.map.iter().find_map(|(name, value)| (name.as_str() == key).then_some(value))
    }

    fn wrong_type<T>(&self, key: &str, wanted: &str, got: &Dynamic) -> ScriptResult<T> {
        script_error(format!("{}: `{key}` must be {wanted}, got {} `{got}`", self.what, got.type_name()))
    }

    pub fn opt_string(&mut self, key: &str) -> ScriptResult<Option<String>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) if v.is_string() => Ok(Some(v.to_string())),
            Some(v) => self.wrong_type(key, "a string", &v),
        }
    }

    /// One of `choices` by its name; the first choice when `key` is unset; any other string is
    /// an error that lists the names.
    pub fn choice<T: Copy>(&mut self, key: &str, choices: &[(&str, T)]) -> ScriptResult<T> {
        let Some(name) = self.opt_string(key)? else {
            return Ok(choices[0].1);
        };
        if let Some(&(_, value)) = choices.iter().find(|(choice, _)| *choice == name) {
            return Ok(value);
        }
        let names: Vec<String> = choices.iter().map(|(choice, _)| format!("\"{choice}\"")).collect();
        let listed = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        script_error(format!("{}: `{key}` must be {listed}, got \"{name}\"", self.what))
    }

    pub fn string(&mut self, key: &str) -> ScriptResult<String> {
        match self.opt_string(key)? {
            Some(s) => Ok(s),
            None => script_error(format!("{}: `{key}` is required", self.what)),
        }
    }

    pub fn opt_bool(&mut self, key: &str) -> ScriptResult<Option<bool>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => match v.as_bool() {
                Ok(b) => Ok(Some(b)),
                Err(_) => self.wrong_type(key, "true or false", &v),
            },
        }
    }

    /// A number (integer or float).
    pub fn opt_f64(&mut self, key: &str) -> ScriptResult<Option<f64>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => match number(&v) {
                Some(n) => Ok(Some(n)),
                None => self.wrong_type(key, "a number", &v),
            },
        }
    }

    /// A whole number ≥ 0.
    pub fn opt_u64(&mut self, key: &str) -> ScriptResult<Option<u64>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => match v.as_int() {
                Ok(n) if n >= 0 => Ok(Some(n as u64)),
                _ => self.wrong_type(key, "a whole number ≥ 0", &v),
            },
        }
    }

    pub fn opt_map(&mut self, key: &str) -> ScriptResult<Option<Map>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) if v.is_map() => Ok(v.try_cast::<Map>()),
            Some(v) => self.wrong_type(key, "a map #{..}", &v),
        }
    }

    pub fn opt_array(&mut self, key: &str) -> ScriptResult<Option<rhai::Array>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) if v.is_array() => Ok(v.try_cast::<rhai::Array>()),
            Some(v) => self.wrong_type(key, "an array [..]", &v),
        }
    }

    /// The value as given, of any type (the caller checks it).
    pub fn opt_value(&mut self, key: &str) -> Option<Dynamic> {
        self.take(key)
    }

    /// A value of a registered custom type (e.g. the result of `endpoint(..)`).
    pub fn opt_custom<T: Clone + Send + Sync + 'static>(
        &mut self,
        key: &str,
        built_by: &str,
    ) -> ScriptResult<Option<T>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) if v.is::<T>() => Ok(v.try_cast::<T>()),
            Some(v) => self.wrong_type(key, &format!("the result of {built_by}"), &v),
        }
    }

    pub fn what(&self) -> &'static str {
        self.what
    }

    /// The map sets `key` to something other than `()`.
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_some_and(|v| !v.is_unit())
    }
}

/// An integer or float as f64.
pub fn number(value: &Dynamic) -> Option<f64> {
    value.as_float().ok().or_else(|| value.as_int().ok().map(|i| i as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_wrong_types_are_named() {
        let mut map = Map::new();
        map.insert("modle".into(), Dynamic::from("x"));
        let err = MapReader::new("endpoint", map, &["model", "url"]).err().unwrap();
        assert!(err.to_string().contains("unknown key `modle` (did you mean `model`?)"), "{err}");

        let mut map = Map::new();
        map.insert("users".into(), Dynamic::from("8"));
        let mut reader = MapReader::new("concurrency", map, &["users"]).unwrap();
        let err = reader.opt_u64("users").unwrap_err();
        assert!(err.to_string().contains("`users` must be a whole number"), "{err}");
    }

    #[test]
    fn a_choice_defaults_to_the_first_and_lists_the_names_when_wrong() {
        let choices = [("pooled", 1), ("never_reuse", 2), ("sticky", 3)];
        let mut empty = MapReader::new("connections", Map::new(), &["strategy"]).unwrap();
        assert_eq!(empty.choice("strategy", &choices).unwrap(), 1);
        let mut map = Map::new();
        map.insert("strategy".into(), Dynamic::from("sticky"));
        assert_eq!(MapReader::new("connections", map, &["strategy"]).unwrap().choice("strategy", &choices).unwrap(), 3);
        let mut map = Map::new();
        map.insert("strategy".into(), Dynamic::from("stiky"));
        let err = MapReader::new("connections", map, &["strategy"]).unwrap().choice("strategy", &choices).unwrap_err();
        let expected = r#"connections: `strategy` must be "pooled", "never_reuse" or "sticky", got "stiky""#;
        assert!(err.to_string().contains(expected), "{err}");
    }
}
