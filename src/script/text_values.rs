//! Text from outside the script (environment variables, `--set` values) turned into Rhai values.

use rhai::Dynamic;

/// The value `raw` spells: an integer, a finite float, `true` or `false`, else the text itself.
pub fn guess(raw: &str) -> Dynamic {
    let trimmed = raw.trim();
    if let Ok(integer) = trimmed.parse::<i64>() {
        return Dynamic::from(integer);
    }
    if let Ok(float) = trimmed.parse::<f64>()
        && float.is_finite()
    {
        return Dynamic::from(float);
    }
    match trimmed {
        "true" => Dynamic::from(true),
        "false" => Dynamic::from(false),
        _ => Dynamic::from(raw.to_string()),
    }
}

/// `raw` converted to the type of `default` (an integer, a float, a bool, else text); `None`
/// when it does not convert.
pub fn like(raw: &str, default: &Dynamic) -> Option<Dynamic> {
    let trimmed = raw.trim();
    if default.is_int() {
        trimmed.parse::<i64>().map(Dynamic::from).ok()
    } else if default.is_float() {
        trimmed.parse::<f64>().ok().filter(|f| f.is_finite()).map(Dynamic::from)
    } else if default.is_bool() {
        match trimmed.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(Dynamic::from(true)),
            "0" | "false" | "no" | "off" => Some(Dynamic::from(false)),
            _ => None,
        }
    } else {
        Some(Dynamic::from(raw.to_string()))
    }
}

/// What `like` wants for `default`, for error messages: "an integer", "a number", ….
pub fn kind_of(default: &Dynamic) -> &'static str {
    if default.is_int() {
        "an integer"
    } else if default.is_float() {
        "a number"
    } else if default.is_bool() {
        "true or false"
    } else {
        "a string"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guess_types_integers_floats_and_bools() {
        assert_eq!(guess("64").as_int(), Ok(64));
        assert_eq!(guess("-3").as_int(), Ok(-3));
        assert_eq!(guess("0.5").as_float(), Ok(0.5));
        assert_eq!(guess("true").as_bool(), Ok(true));
        assert_eq!(guess("false").as_bool(), Ok(false));
        assert_eq!(guess("llama").into_string().as_deref(), Ok("llama"));
        assert_eq!(guess("inf").into_string().as_deref(), Ok("inf"), "not a finite number");
        assert_eq!(guess("").into_string().as_deref(), Ok(""));
    }

    #[test]
    fn like_converts_to_the_default_type_or_refuses() {
        assert_eq!(like("8", &Dynamic::from(1_i64)).and_then(|v| v.as_int().ok()), Some(8));
        assert_eq!(like("8", &Dynamic::from(1.0)).and_then(|v| v.as_float().ok()), Some(8.0));
        assert_eq!(like("on", &Dynamic::from(false)).and_then(|v| v.as_bool().ok()), Some(true));
        assert_eq!(like("42", &Dynamic::from("x")).and_then(|v| v.into_string().ok()).as_deref(), Some("42"));
        assert!(like("2.5", &Dynamic::from(1_i64)).is_none());
        assert!(like("fast", &Dynamic::from(1.0)).is_none());
        assert!(like("maybe", &Dynamic::from(true)).is_none());
    }

    #[test]
    fn kinds_are_named_for_people() {
        assert_eq!(kind_of(&Dynamic::from(1_i64)), "an integer");
        assert_eq!(kind_of(&Dynamic::from(1.0)), "a number");
        assert_eq!(kind_of(&Dynamic::from(true)), "true or false");
        assert_eq!(kind_of(&Dynamic::from("x")), "a string");
    }
}
