//! The document `aiperf profile`'s flags build: the normalized config shape (see `config`),
//! the sweep their comma-separated lists ask for, and the notes for flags with no effect here.

use serde_json::{Map, Value, json};

use crate::config::set_path;

#[derive(Debug, Default)]
pub struct FlagDocument {
    /// The normalized document of the flags given (only what they set).
    pub document: Value,
    /// Swept `benchmark` paths and their values, in the order given.
    pub sweep: Vec<(String, Vec<Value>)>,
    /// Every path the flags set, in order, with its value: laid over a config file one by one.
    pub sets: Vec<(String, Value)>,
    /// One line per accepted flag that does nothing here.
    pub notes: Vec<String>,
}

/// What the flags come to: their own document, the paths they set, and the notes.
pub struct Flags {
    pub document: Value,
    pub sets: Vec<(String, Value)>,
    pub notes: Vec<String>,
}

impl FlagDocument {
    pub fn set(&mut self, path: &str, value: Value) {
        set_path(&mut self.document, path, value.clone());
        self.sets.push((path.to_string(), value));
    }

    /// Set `benchmark.<path>`, or sweep it when `text` is a comma-separated list.
    pub fn set_or_sweep(
        &mut self,
        path: &str,
        text: &str,
        read: impl Fn(&str) -> Result<Value, String>,
    ) -> Result<(), String> {
        let values = text.split(',').map(read).collect::<Result<Vec<_>, _>>()?;
        match <[Value; 1]>::try_from(values) {
            Ok([value]) => self.set(&format!("benchmark.{path}"), value),
            Err(values) => {
                self.sweep.retain(|(swept, _)| swept != path);
                self.sweep.push((path.to_string(), values));
            }
        }
        Ok(())
    }

    /// Whether the flags give `benchmark.<path>` a value, or sweep it.
    pub fn gives(&self, path: &str) -> bool {
        crate::config::get_path(&self.document, &format!("benchmark.{path}")).is_some()
            || self.sweep.iter().any(|(swept, _)| swept == path)
    }

    /// An entry of a map at `path`, keeping the entries already there.
    pub fn insert(&mut self, path: &str, key: &str, value: Value) {
        let mut map =
            crate::config::get_path(&self.document, path).and_then(Value::as_object).cloned().unwrap_or_default();
        map.insert(key.to_string(), value);
        self.set(path, Value::Object(map));
    }

    /// The finished document: the flags' keys, and their sweep as a grid (or `--sweep-type zip`).
    pub fn finish(mut self) -> Flags {
        if !self.sweep.is_empty() {
            let parameters: Map<String, Value> =
                self.sweep.iter().map(|(path, values)| (path.clone(), Value::Array(values.clone()))).collect();
            self.set("sweep.parameters", Value::Object(parameters));
            if crate::config::get_path(&self.document, "sweep.type").is_none() {
                self.set("sweep.type", json!("grid"));
            }
        }
        if self.document.is_null() {
            self.document = json!({});
        }
        Flags { document: self.document, sets: self.sets, notes: self.notes }
    }
}
