//! The names a scenario knows types by: aiperf's own (`Session`, `RunResults`, ..), registered
//! here under those names before any function that takes them, and Rhai's (`i64`, `string`,
//! `map`, ..), as its messages name them. A hint names a function's parameters by them, from the
//! `TypeId`s Rhai keeps of each.

use std::any::TypeId;

use rhai::{Array, Blob, Dynamic, Engine, FnPtr, ImmutableString, Map};

use super::answers::Answer;
use super::compare::Comparison;
use super::results::{MetricStats, RunResults};
use crate::agents::scripted::Session;
use crate::plan::{Dataset, Endpoint, Phase};

/// aiperf's types: `register` names them on the engine, `aiperf_type` names them in hints.
macro_rules! aiperf_types {
    ($($ty:ty => $name:literal),* $(,)?) => {
        /// Registers aiperf's types under their names.
        pub fn register(engine: &mut Engine) {
            $(engine.register_type_with_name::<$ty>($name);)*
        }

        fn aiperf_type(id: TypeId) -> Option<&'static str> {
            $(if id == TypeId::of::<$ty>() {
                return Some($name);
            })*
            None
        }
    };
}

aiperf_types! {
    Endpoint => "Endpoint",
    Dataset => "Dataset",
    Phase => "Phase",
    RunResults => "RunResults",
    MetricStats => "MetricStats",
    Comparison => "Comparison",
    Session => "Session",
    Answer => "Answer",
}

/// The name of the type `id`, or `None` for a type no scenario sees by name.
pub fn of(id: TypeId) -> Option<&'static str> {
    aiperf_type(id).or_else(|| rhai_type(id))
}

fn rhai_type(id: TypeId) -> Option<&'static str> {
    let names: [(TypeId, &str); 11] = [
        (TypeId::of::<i64>(), "i64"),
        (TypeId::of::<f64>(), "f64"),
        (TypeId::of::<bool>(), "bool"),
        (TypeId::of::<char>(), "char"),
        (TypeId::of::<ImmutableString>(), "string"),
        (TypeId::of::<Array>(), "array"),
        (TypeId::of::<Map>(), "map"),
        (TypeId::of::<FnPtr>(), "Fn"),
        (TypeId::of::<Blob>(), "blob"),
        (TypeId::of::<Dynamic>(), "any"),
        (TypeId::of::<()>(), "()"),
    ];
    names.iter().find(|(known, _)| *known == id).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiperfs_and_rhais_types_are_named_as_scripts_see_them() {
        let mut engine = Engine::new();
        register(&mut engine);
        assert_eq!(engine.map_type_name(std::any::type_name::<Session>()), "Session");
        assert_eq!(of(TypeId::of::<Session>()), Some("Session"));
        assert_eq!(of(TypeId::of::<RunResults>()), Some("RunResults"));
        assert_eq!(of(TypeId::of::<ImmutableString>()), Some("string"));
        assert_eq!(of(TypeId::of::<Dynamic>()), Some("any"));
        assert_eq!(of(TypeId::of::<std::time::Duration>()), None);
    }
}
