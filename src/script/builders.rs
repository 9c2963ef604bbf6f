//! How the plan types a scenario holds (`Endpoint`, `Dataset`, `Phase`, named in
//! `type_names.rs`) print, and the `endpoint` builder's registration; the builders themselves
//! live in `endpoint.rs`, `synthetic.rs`, `file_dataset.rs` and `phases.rs`. Each validates its
//! map and returns a typed value that `run(#{..})` accepts.

use rhai::Engine;

use crate::plan::{Dataset, Endpoint, Phase};

pub fn register(engine: &mut Engine) {
    engine
        .register_fn("to_string", |e: &mut Endpoint| json_text(e))
        .register_fn("to_debug", |e: &mut Endpoint| json_text(e))
        .register_fn("to_string", |d: &mut Dataset| json_text(d))
        .register_fn("to_debug", |d: &mut Dataset| json_text(d))
        .register_fn("to_string", |p: &mut Phase| json_text(p))
        .register_fn("to_debug", |p: &mut Phase| json_text(p));
    engine.register_fn("endpoint", super::endpoint::endpoint);
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
