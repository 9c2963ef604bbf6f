//! `${NAME}` and `${NAME:default}` in a config file's text, replaced by the environment's
//! values before the YAML is parsed (so a substituted number is read as a number).

use super::ConfigError;

/// The file's text with every `${NAME}` / `${NAME:default}` outside comment lines replaced;
/// `lookup` answers a variable's value (the process environment in `read_file`).
pub fn substitute_env(text: &str, file: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('#') {
            out.push_str(line);
            continue;
        }
        out.push_str(
            &substitute_line(line, &lookup)
                .map_err(|problem| ConfigError::new(format!("{file}:{}: {problem}", index + 1)))?,
        );
    }
    Ok(out)
}

fn substitute_line(line: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let body_start = start + 2;
        let Some(length) = rest[body_start..].find('}') else {
            return Err(format!("`{}` has no closing `}}`", rest[start..].trim_end()));
        };
        let body = &rest[body_start..body_start + length];
        let (name, default) = match body.split_once(':') {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        if !is_variable_name(name) {
            return Err(format!(
                "`${{{body}}}` is not an environment variable reference (a name is letters, digits and _)"
            ));
        }
        match (lookup(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set and `${{{name}}}` gives no default (write `${{{name}:default}}`)"
                ));
            }
        }
        rest = &rest[body_start + length + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::substitute_env;

    fn lookup(name: &str) -> Option<String> {
        (name == "SET").then(|| "value".to_string())
    }

    #[test]
    fn set_variables_and_defaults_are_substituted() {
        let text = "a: ${SET}\nb: ${UNSET:fallback}\nc: x${SET}y${UNSET:}z\n";
        let out = substitute_env(text, "f.yaml", lookup).unwrap();
        assert_eq!(out, "a: value\nb: fallback\nc: xvalueyz\n");
    }

    #[test]
    fn an_unset_variable_without_default_names_file_line_and_variable() {
        let error = substitute_env("a: 1\nb: ${MISSING}\n", "f.yaml", lookup).unwrap_err();
        assert!(error.message.starts_with("f.yaml:2: environment variable MISSING is not set"), "{error}");
    }

    #[test]
    fn comment_lines_are_left_alone() {
        let out = substitute_env("# uses ${MISSING}\na: 1\n", "f.yaml", lookup).unwrap();
        assert_eq!(out, "# uses ${MISSING}\na: 1\n");
    }
}
