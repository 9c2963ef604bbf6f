//! Dotted paths (`choices.0.delta.content`) read from a JSON payload in one pass, without
//! building its tree: members and elements off every path are skipped, and strings at a path's
//! end are borrowed from the payload (so a streamed event costs no allocation of its own).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::payload::JsonText;

/// What one path led to in one payload (`null` and a missing path give nothing).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found<'a> {
    Text(Cow<'a, str>),
    Count(u64),
    /// Anything else: an object, a list, a negative or fractional number, a bool.
    Json(Value),
}

/// `N` paths compiled into a tree of segments; where a path ends, its slot in the answer.
#[derive(Debug)]
pub(crate) struct PathSet<const N: usize> {
    root: Node,
}

#[derive(Debug, Default)]
struct Node {
    /// The slots of the paths that end here (a path that another one extends is read whole).
    slots: Vec<usize>,
    children: Vec<(String, Node)>,
}

impl Node {
    fn child(&self, segment: &str) -> Option<&Node> {
        self.children.iter().find(|(name, _)| name == segment).map(|(_, node)| node)
    }

    fn child_mut(&mut self, segment: &str) -> &mut Node {
        match self.children.iter().position(|(name, _)| name == segment) {
            Some(at) => &mut self.children[at].1,
            None => {
                self.children.push((segment.to_string(), Node::default()));
                let last = self.children.len() - 1;
                &mut self.children[last].1
            }
        }
    }

    /// The child for element `index` of a list (`choices.0`).
    fn element(&self, index: usize) -> Option<&Node> {
        self.children.iter().find(|(name, _)| name.parse::<usize>() == Ok(index)).map(|(_, node)| node)
    }
}

impl<const N: usize> PathSet<N> {
    /// The paths to read, each answered in the same position (`None`: nothing to read there).
    pub fn new(paths: [Option<&str>; N]) -> Self {
        let mut root = Node::default();
        for (slot, path) in paths.iter().enumerate() {
            if let Some(path) = path {
                path.split('.').fold(&mut root, |node, segment| node.child_mut(segment)).slots.push(slot);
            }
        }
        Self { root }
    }

    /// What each path leads to in `payload`; an error only if `payload` is not JSON.
    pub fn read<'a>(&self, payload: &'a [u8]) -> serde_json::Result<[Option<Found<'a>>; N]> {
        let mut found = std::array::from_fn(|_| None);
        let mut deserializer = serde_json::Deserializer::from_slice(payload);
        Walk { node: &self.root, found: &mut found }.deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(found)
    }
}

/// Walks one value at `node`: into the members and elements on a path, past the others.
struct Walk<'t, 's, 'a, const N: usize> {
    node: &'t Node,
    found: &'s mut [Option<Found<'a>>; N],
}

impl<'de, const N: usize> DeserializeSeed<'de> for Walk<'_, '_, 'de, N> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.node.slots.is_empty() {
            return deserializer.deserialize_any(self);
        }
        let value = deserializer.deserialize_any(Capture)?;
        for &slot in &self.node.slots {
            self.found[slot] = value.clone();
        }
        Ok(())
    }
}

impl<'de, const N: usize> Visitor<'de> for Walk<'_, '_, 'de, N> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(JsonText(name)) = members.next_key::<JsonText<'de>>()? {
            match self.node.child(&name) {
                Some(child) => members.next_value_seed(Walk { node: child, found: &mut *self.found })?,
                None => members.next_value::<IgnoredAny>().map(drop)?,
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut elements: A) -> Result<(), A::Error> {
        for index in 0.. {
            let more = match self.node.element(index) {
                Some(child) => elements.next_element_seed(Walk { node: child, found: &mut *self.found })?.is_some(),
                None => elements.next_element::<IgnoredAny>()?.is_some(),
            };
            if !more {
                break;
            }
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Takes the value at a path's end.
struct Capture;

impl<'de> Visitor<'de> for Capture {
    type Value = Option<Found<'de>>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Found::Text(Cow::Borrowed(text))))
    }

    fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(Found::Text(Cow::Owned(text.to_owned()))))
    }

    fn visit_u64<E>(self, count: u64) -> Result<Self::Value, E> {
        Ok(Some(Found::Count(count)))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Self::Value, E> {
        Ok(Some(Found::Json(number.into())))
    }

    fn visit_f64<E>(self, number: f64) -> Result<Self::Value, E> {
        Ok(Some(Found::Json(number.into())))
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Self::Value, E> {
        Ok(Some(Found::Json(flag.into())))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(members)).map(|value| Some(Found::Json(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, elements: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(elements)).map(|value| Some(Found::Json(value)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_through_members_and_elements_are_read_in_one_pass() {
        let paths = PathSet::new([
            Some("choices.0.delta.content"),
            Some("choices.1.delta.content"),
            Some("usage.completion_tokens"),
            Some("error"),
            None,
            Some("choices.0.missing"),
        ]);
        let found = paths
            .read(
                br#"{"id":"x","choices":[{"delta":{"content":"Hi","role":"a"}},{"delta":{"content":"y\nz"}}],
                       "usage":{"completion_tokens":3},"error":{"message":"bad"},"extra":[1,{"a":[]}]}"#,
            )
            .unwrap();
        assert!(matches!(&found[0], Some(Found::Text(Cow::Borrowed("Hi")))), "{:?}", found[0]);
        assert_eq!(found[1], Some(Found::Text(Cow::Owned("y\nz".into()))));
        assert_eq!(found[2], Some(Found::Count(3)));
        assert_eq!(found[3], Some(Found::Json(json!({"message": "bad"}))));
        assert_eq!((&found[4], &found[5]), (&None, &None));
    }

    #[test]
    fn null_or_other_shapes_give_nothing_or_json_and_bad_json_is_an_error() {
        let paths = PathSet::new([Some("a"), Some("b.0"), Some("c"), Some("a")]);
        let found = paths.read(br#"{"a":null,"b":{"0":-2},"c":[true]}"#).unwrap();
        assert_eq!(found, [None, Some(Found::Json(json!(-2))), Some(Found::Json(json!([true]))), None]);
        assert!(paths.read(br#"{"a":"#).is_err());
        assert!(paths.read(br#"{"a":1} trailing"#).is_err());
    }
}
