//! Our own normaliser of math answers (LaTeX or plain) and the comparison the math graders
//! make: equal normalised text, else equal values within 1e-6 (relative above 1), the values
//! computed by the `evalexpr` crate from the normalised expression.
//!
//! Normalising: `$`, spacing commands, `\left`/`\right`, `^\circ`, `%`, a trailing `.`, and
//! `\text{..}` wrappers (kept: their content) are dropped; `x = 5` becomes `5`; thousands
//! separators go; `\dfrac`/`\tfrac`/`\frac{a}{b}` (and `\frac12`) become `(a)/(b)`,
//! `\sqrt{x}` (and `\sqrt3`) `math::sqrt(x)`, `\cdot`/`\times` `*`, `\pi` the number, braces
//! parentheses, and a number before a parenthesis a product (`2\pi` is `2*(3.14…)`). What
//! this does not cover (symbolic algebra, intervals, sets, matrices) is compared as
//! normalised text only.

use std::sync::LazyLock;

use regex::Regex;

static THOUSANDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d{1,3})((?:,\d{3})+)\b").expect("a fixed pattern"));
static TEXT_WRAPPER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\\(?:text|textbf|mathrm|mathbf|mbox)\{([^{}]*)\}").expect("a fixed pattern"));
static SHORT_FRAC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\frac(\d)(\d)").expect("a fixed pattern"));
static SHORT_SQRT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\sqrt(\d+)").expect("a fixed pattern"));
static INTEGER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+(?:\.\d*)?").expect("a fixed pattern"));
/// A number or a closing parenthesis right before an opening one or a function: a product.
static IMPLICIT_PRODUCT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([0-9)])(\(|math::)").expect("a fixed pattern"));
static LONE_VARIABLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-zA-Z]\w*=").expect("a fixed pattern"));

/// `answer` normalised for comparison.
pub fn normalise(answer: &str) -> String {
    let mut text = answer.trim().to_string();
    text = TEXT_WRAPPER.replace_all(&text, "$1").into_owned();
    for dropped in ["$", "\\left", "\\right", "\\!", "\\,", "\\;", "\\:", "\\ ", "^\\circ", "^{\\circ}", "\\%", "%"] {
        text = text.replace(dropped, "");
    }
    text.retain(|ch| !ch.is_whitespace());
    text = text.trim_end_matches('.').to_string();
    if let Some(found) = LONE_VARIABLE.find(&text) {
        text = text[found.end()..].to_string();
    }
    text = THOUSANDS
        .replace_all(&text, |found: &regex::Captures| format!("{}{}", &found[1], found[2].replace(',', "")))
        .into_owned();
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac");
    text = SHORT_FRAC.replace_all(&text, "\\frac{$1}{$2}").into_owned();
    text = SHORT_SQRT.replace_all(&text, "\\sqrt{$1}").into_owned();
    text = fractions(&text);
    let text = text
        .replace("\\sqrt", "math::sqrt")
        .replace("\\cdot", "*")
        .replace("\\times", "*")
        .replace("\\pi", "(3.141592653589793)")
        .replace('{', "(")
        .replace('}', ")");
    IMPLICIT_PRODUCT.replace_all(&text, "$1*$2").into_owned()
}

/// Every `\frac{a}{b}` (nested too) as `({a})/({b})`.
fn fractions(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(at) = out.find("\\frac{") {
        let Some((numerator, after_numerator)) = braced(&out, at + "\\frac".len()) else { break };
        let Some((denominator, end)) = braced(&out, after_numerator) else { break };
        out = format!("{}({{{numerator}}})/({{{denominator}}}){}", &out[..at], &out[end..]);
    }
    out
}

/// The text inside the braces opening at `open` and the index after them.
pub fn braced(text: &str, open: usize) -> Option<(String, usize)> {
    if text.as_bytes().get(open) != Some(&b'{') {
        return None;
    }
    let mut depth = 0usize;
    for (offset, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((text[open + 1..open + offset].to_string(), open + offset + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// The value of a normalised expression, when it is a number (integers read as floats so
/// that `1/2` is a half).
fn value(normalised: &str) -> Option<f64> {
    let floats = INTEGER.replace_all(normalised, |found: &regex::Captures| {
        let number = &found[0];
        if number.contains('.') { format!("{number}0") } else { format!("{number}.0") }
    });
    evalexpr::eval_number(&floats).ok().filter(|value| value.is_finite())
}

/// Whether `answer` and `gold` are the same answer.
pub fn equivalent(answer: &str, gold: &str) -> bool {
    let (answer, gold) = (normalise(answer), normalise(gold));
    if answer.eq_ignore_ascii_case(&gold) {
        return true;
    }
    match (value(&answer), value(&gold)) {
        (Some(answer), Some(gold)) => (answer - gold).abs() <= 1e-6 * gold.abs().max(1.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_in_other_spellings_agree() {
        assert!(equivalent("\\frac{1}{2}", "0.5"));
        assert!(equivalent("\\dfrac12", "1/2"));
        assert!(equivalent("x = 10", "10"));
        assert!(equivalent("1,000", "1000"));
        assert!(equivalent("$45^\\circ$", "45"));
        assert!(equivalent("2*\\sqrt{2}", "2\\cdot\\sqrt2"));
        assert!(equivalent("\\text{(B)}", "(B)"));
        assert!(!equivalent("\\frac{1}{3}", "0.33"));
        assert!(!equivalent("7", "8"));
        assert!(equivalent("2\\pi", "6.283185307179586") && !equivalent("12\\pi1", "12\\pi"));
        assert!(equivalent("2\\sqrt{2}", "\\sqrt{8}"));
    }
}
