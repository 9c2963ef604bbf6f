//! The Jinja2 subset AIPerf's config templates use: `{{ expression }}` in string values, with
//! variables from the file's `variables:` block. An expression is numbers, 'strings',
//! variables (`a` or `a.b`), `+ - * / // % ~`, parentheses, unary minus and the filters
//! `int`, `float`, `string`, `round`, `abs`, `lower`, `upper`, `default(value)`. Statements
//! (`{% if %}`, `{% for %}`, `{% set %}`) and comments (`{# #}`) are refused.

use serde_json::{Map, Number, Value};

/// A string value rendered: a string that is one `{{ expression }}` becomes the expression's
/// value (a number stays a number); text around expressions gives a string.
pub fn render(template: &str, variables: &Map<String, Value>) -> Result<Value, String> {
    for refused in ["{%", "{#"] {
        if template.contains(refused) {
            return Err(format!(
                "`{}`: Jinja2 statements and comments ({refused} … ) are not supported; only {{{{ expression }}}} is (see docs/config.md)",
                template.trim()
            ));
        }
    }
    let trimmed = template.trim();
    if let Some(inner) = trimmed.strip_prefix("{{").and_then(|rest| rest.strip_suffix("}}"))
        && !inner.contains("{{")
        && !inner.contains("}}")
    {
        return evaluate(inner, variables);
    }
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let Some(length) = rest[start + 2..].find("}}") else {
            return Err(format!("`{}` has `{{{{` without its `}}}}`", template.trim()));
        };
        let value = evaluate(&rest[start + 2..start + 2 + length], variables)?;
        out.push_str(&display(&value));
        rest = &rest[start + 2 + length + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

/// Whether a string holds a template expression.
pub fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%") || text.contains("{#")
}

fn evaluate(expression: &str, variables: &Map<String, Value>) -> Result<Value, String> {
    let tokens = tokenize(expression).map_err(|problem| format!("`{{{{{expression}}}}}`: {problem}"))?;
    let mut parser = Parser { tokens, position: 0, variables };
    let value = parser.additive().map_err(|problem| format!("`{{{{{expression}}}}}`: {problem}"))?;
    if parser.position != parser.tokens.len() {
        return Err(format!("`{{{{{expression}}}}}`: unexpected {:?}", parser.tokens[parser.position]));
    }
    value.ok_or_else(|| format!("`{{{{{expression}}}}}`: undefined variable"))
}

fn display(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(Value),
    Text(String),
    Name(String),
    Symbol(&'static str),
}

const SYMBOLS: [&str; 12] = ["//", "+", "-", "*", "/", "%", "~", "(", ")", "|", ".", ","];

fn tokenize(expression: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = expression.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let number = if text.contains('.') {
                text.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
            } else {
                text.parse::<i64>().ok().map(Value::from)
            };
            tokens.push(Token::Number(number.ok_or_else(|| format!("`{text}` is not a number"))?));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Name(chars[start..i].iter().collect()));
        } else if c == '\'' || c == '"' {
            let end = chars[i + 1..].iter().position(|q| *q == c).ok_or("a string literal is not closed")?;
            tokens.push(Token::Text(chars[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let symbol = SYMBOLS
                .iter()
                .find(|symbol| rest.starts_with(**symbol))
                .ok_or_else(|| format!("`{c}` is not supported in the Jinja2 subset"))?;
            tokens.push(Token::Symbol(symbol));
            i += symbol.len();
        }
    }
    Ok(tokens)
}

/// Recursive descent over the tokens; `None` is an undefined variable (only `default` takes it).
struct Parser<'a> {
    tokens: Vec<Token>,
    position: usize,
    variables: &'a Map<String, Value>,
}

type Evaluated = Result<Option<Value>, String>;

impl Parser<'_> {
    fn peek_symbol(&self) -> Option<&'static str> {
        match self.tokens.get(self.position) {
            Some(Token::Symbol(symbol)) => Some(symbol),
            _ => None,
        }
    }

    fn expect(&mut self, symbol: &str) -> Result<(), String> {
        if self.peek_symbol() == Some(symbol) {
            self.position += 1;
            Ok(())
        } else {
            Err(format!("expected `{symbol}`"))
        }
    }

    fn additive(&mut self) -> Evaluated {
        let mut left = self.multiplicative()?;
        while let Some(symbol @ ("+" | "-" | "~")) = self.peek_symbol() {
            self.position += 1;
            let right = self.multiplicative()?;
            left = Some(arithmetic(symbol, defined(left)?, defined(right)?)?);
        }
        Ok(left)
    }

    fn multiplicative(&mut self) -> Evaluated {
        let mut left = self.unary()?;
        while let Some(symbol @ ("*" | "/" | "//" | "%")) = self.peek_symbol() {
            self.position += 1;
            let right = self.unary()?;
            left = Some(arithmetic(symbol, defined(left)?, defined(right)?)?);
        }
        Ok(left)
    }

    fn unary(&mut self) -> Evaluated {
        if self.peek_symbol() == Some("-") {
            self.position += 1;
            let value = defined(self.unary()?)?;
            return Ok(Some(arithmetic("-", Value::from(0), value)?));
        }
        let mut value = self.primary()?;
        while self.peek_symbol() == Some("|") {
            self.position += 1;
            value = self.filter(value)?;
        }
        Ok(value)
    }

    fn primary(&mut self) -> Evaluated {
        let token = self.tokens.get(self.position).cloned().ok_or("the expression ends too early")?;
        self.position += 1;
        match token {
            Token::Number(number) => Ok(Some(number)),
            Token::Text(text) => Ok(Some(Value::String(text))),
            Token::Symbol("(") => {
                let value = self.additive()?;
                self.expect(")")?;
                Ok(value)
            }
            Token::Name(name) => {
                let mut value = self.variables.get(&name).cloned();
                while self.peek_symbol() == Some(".") {
                    self.position += 1;
                    let Some(Token::Name(field)) = self.tokens.get(self.position).cloned() else {
                        return Err("expected a name after `.`".into());
                    };
                    self.position += 1;
                    value = value.and_then(|value| value.get(&field).cloned());
                }
                Ok(value)
            }
            Token::Symbol(symbol) => Err(format!("unexpected `{symbol}`")),
        }
    }

    fn filter(&mut self, value: Option<Value>) -> Evaluated {
        let Some(Token::Name(name)) = self.tokens.get(self.position).cloned() else {
            return Err("expected a filter name after `|`".into());
        };
        self.position += 1;
        if name == "default" {
            self.expect("(")?;
            let fallback = self.additive()?;
            self.expect(")")?;
            return Ok(value.or(fallback));
        }
        let value = defined(value)?;
        let filtered = match name.as_str() {
            "int" => {
                Value::from(as_number(&value).map(|n| n.trunc() as i64).ok_or_else(|| format!("`int` of {value}"))?)
            }
            "float" => float_value(as_number(&value).ok_or_else(|| format!("`float` of {value}"))?)?,
            "string" => Value::String(display(&value)),
            "round" => float_value(as_number(&value).ok_or_else(|| format!("`round` of {value}"))?.round())?,
            "abs" => match &value {
                Value::Number(n) if n.is_i64() => Value::from(n.as_i64().unwrap_or_default().abs()),
                other => float_value(as_number(other).ok_or_else(|| format!("`abs` of {other}"))?.abs())?,
            },
            "lower" => Value::String(display(&value).to_lowercase()),
            "upper" => Value::String(display(&value).to_uppercase()),
            other => {
                return Err(format!(
                    "the filter `{other}` is not supported (int, float, string, round, abs, lower, upper, default)"
                ));
            }
        };
        Ok(Some(filtered))
    }
}

fn defined(value: Option<Value>) -> Result<Value, String> {
    value.ok_or_else(|| "undefined variable (define it under `variables:` or add `| default(...)`)".to_string())
}

fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        Value::Bool(flag) => Some(f64::from(u8::from(*flag))),
        _ => None,
    }
}

fn float_value(number: f64) -> Result<Value, String> {
    Number::from_f64(number).map(Value::Number).ok_or_else(|| format!("{number} is not a finite number"))
}

fn arithmetic(symbol: &str, left: Value, right: Value) -> Result<Value, String> {
    if symbol == "~" {
        return Ok(Value::String(format!("{}{}", display(&left), display(&right))));
    }
    if let (Value::String(a), Value::String(b), "+") = (&left, &right, symbol) {
        return Ok(Value::String(format!("{a}{b}")));
    }
    let integers = match (&left, &right) {
        (Value::Number(a), Value::Number(b)) => a.as_i64().zip(b.as_i64()),
        _ => None,
    };
    if let Some((a, b)) = integers {
        let exact = match symbol {
            "+" => a.checked_add(b),
            "-" => a.checked_sub(b),
            "*" => a.checked_mul(b),
            "//" if b != 0 => Some(a.div_euclid(b)),
            "%" if b != 0 => Some(a.rem_euclid(b)),
            _ => None,
        };
        if let Some(result) = exact {
            return Ok(Value::from(result));
        }
    }
    let (Some(a), Some(b)) = (left.as_f64(), right.as_f64()) else {
        return Err(format!("`{symbol}` needs numbers, got {left} and {right}"));
    };
    if matches!(symbol, "/" | "//" | "%") && b == 0.0 {
        return Err("division by zero".into());
    }
    float_value(match symbol {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        "//" => (a / b).floor(),
        _ => a.rem_euclid(b),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::render;

    fn variables() -> Map<String, Value> {
        json!({"base": 16, "ratio": 1.5, "name": "dense", "nested": {"gpus": 4}}).as_object().unwrap().clone()
    }

    #[test]
    fn a_whole_expression_keeps_its_type() {
        let vars = variables();
        assert_eq!(render("{{ base * 5 }}", &vars).unwrap(), json!(80));
        assert_eq!(render("{{ base // 3 }}", &vars).unwrap(), json!(5));
        assert_eq!(render("{{ base / 4 }}", &vars).unwrap(), json!(4.0));
        assert_eq!(render("{{ (base + 4) * ratio }}", &vars).unwrap(), json!(30.0));
        assert_eq!(render("{{ nested.gpus * -2 }}", &vars).unwrap(), json!(-8));
        assert_eq!(render("{{ ratio | int }}", &vars).unwrap(), json!(1));
        assert_eq!(render("{{ missing | default(7) }}", &vars).unwrap(), json!(7));
    }

    #[test]
    fn text_around_expressions_gives_a_string() {
        let vars = variables();
        assert_eq!(render("isl={{ base }}", &vars).unwrap(), json!("isl=16"));
        assert_eq!(render("{{ name | upper }}-{{ base }}", &vars).unwrap(), json!("DENSE-16"));
    }

    #[test]
    fn statements_unknown_filters_and_undefined_variables_are_refused() {
        let vars = variables();
        assert!(render("{% if base %}x{% endif %}", &vars).unwrap_err().contains("not supported"));
        assert!(render("{{ base | tojson }}", &vars).unwrap_err().contains("`tojson` is not supported"));
        assert!(render("{{ nope }}", &vars).unwrap_err().contains("undefined variable"));
    }
}
