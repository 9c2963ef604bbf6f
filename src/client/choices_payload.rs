//! The OpenAI payload shape that chat and text completions share — `choices` (the first one
//! read), `usage`, `error` — read straight into `ResponseFields` as the parser meets each
//! member. This runs for every streamed token: building a payload struct first and moving it
//! level by level into the fields cost a copy of a few hundred bytes at each level. Members
//! other than these, and choices after the first, are skipped unparsed.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, WireUsage, from_json_seed, text};

/// How a kind reads the members of its first choice into the fields.
pub(crate) trait ChoiceReader: Copy {
    /// The names of the members the kind reads, and one for all others.
    type Member: DeserializeOwned;
    /// Read the value of `member` from `members` (or skip it with `skip`).
    fn read_member<'de, A: MapAccess<'de>>(
        self,
        member: Self::Member,
        members: &mut A,
        fields: &mut ResponseFields<'de>,
    ) -> Result<(), A::Error>;
}

/// The next value, a string or null.
pub(crate) fn optional_text<'de, A: MapAccess<'de>>(members: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(text(members.next_value::<Option<JsonText<'de>>>()?))
}

/// Pass over the next value without building it.
pub(crate) fn skip<'de, A: MapAccess<'de>>(members: &mut A) -> Result<(), A::Error> {
    members.next_value::<IgnoredAny>().map(|_| ())
}

/// The fields of one payload whose first choice `choice` reads.
pub(crate) fn parse(input: &[u8], choice: impl ChoiceReader) -> serde_json::Result<ResponseFields<'_>> {
    let mut fields = ResponseFields::default();
    from_json_seed(input, Payload { choice, fields: &mut fields })?;
    Ok(fields)
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum PayloadMember {
    Choices,
    Usage,
    Error,
    #[serde(other)]
    Other,
}

/// The payload object: `choices`, `usage`, `error`.
struct Payload<'f, 'a, C> {
    choice: C,
    fields: &'f mut ResponseFields<'a>,
}

/// `choices`: an array (its first element read, the rest skipped) or null.
struct FirstChoice<'f, 'a, C> {
    choice: C,
    fields: &'f mut ResponseFields<'a>,
}

/// One choice object, handed to the kind's reader.
struct Choice<'f, 'a, C> {
    choice: C,
    fields: &'f mut ResponseFields<'a>,
}

/// Each visitor is also the seed that reads its value, the way `$read` says.
macro_rules! seed_reading_with {
    ($visitor:ident, $read:ident) => {
        impl<'de, C: ChoiceReader> DeserializeSeed<'de> for $visitor<'_, 'de, C> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
                deserializer.$read(self)
            }
        }
    };
}

seed_reading_with!(Payload, deserialize_map);
seed_reading_with!(FirstChoice, deserialize_any);
seed_reading_with!(Choice, deserialize_map);

impl<'de, C: ChoiceReader> Visitor<'de> for Payload<'_, 'de, C> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a completion object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(member) = members.next_key()? {
            match member {
                PayloadMember::Choices => {
                    members.next_value_seed(FirstChoice { choice: self.choice, fields: &mut *self.fields })?
                }
                PayloadMember::Usage => self.fields.usage = members.next_value::<Option<WireUsage>>()?.map(Into::into),
                PayloadMember::Error => self.fields.error = members.next_value::<Option<Value>>()?,
                PayloadMember::Other => skip(&mut members)?,
            }
        }
        Ok(())
    }
}

impl<'de, C: ChoiceReader> Visitor<'de> for FirstChoice<'_, 'de, C> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an array or null")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut elements: A) -> Result<(), A::Error> {
        elements.next_element_seed(Choice { choice: self.choice, fields: self.fields })?;
        while elements.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

impl<'de, C: ChoiceReader> Visitor<'de> for Choice<'_, 'de, C> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a choice object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(member) = members.next_key()? {
            self.choice.read_member(member, &mut members, self.fields)?;
        }
        Ok(())
    }
}
