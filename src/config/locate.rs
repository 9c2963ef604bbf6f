//! The line of a config file's YAML that holds a key path of its normalized document
//! (`benchmark.phases[1].concurrency`), found by following the path's keys down the text; so
//! that schema problems can name `file:line`. `None` when the last key is not found.

use super::normalize::snake_case;

/// The 1-based line where `path` is written in `text`, if it can be found.
pub fn line_of(text: &str, path: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    let mut found = None;
    let segments: Vec<&str> = path.split('.').collect();
    for (position, segment) in segments.iter().enumerate() {
        let (key, index) = split_index(segment);
        let last = position + 1 == segments.len();
        match find_key(&lines, from, key, index) {
            Some(line) => {
                from = line;
                found = Some(line);
                if let Some(item) = index.and_then(|index| nth_item(&lines, line, index)) {
                    from = item;
                    found = Some(item);
                }
            }
            None if last => return None,
            None => {}
        }
    }
    found.map(|line| line + 1)
}

fn split_index(segment: &str) -> (&str, Option<usize>) {
    match segment.split_once('[') {
        Some((key, rest)) => (key, rest.trim_end_matches(']').parse().ok()),
        None => (segment, None),
    }
}

/// The spellings a normalized key may have in the file: itself, camelCase, and the shorthand
/// it may come from.
fn spellings(key: &str, index: Option<usize>) -> Vec<String> {
    let mut names = vec![key.to_string(), camel_case(key)];
    let shorthand = match (key, index) {
        ("datasets", _) => Some("dataset"),
        ("urls", _) => Some("url"),
        ("models", _) => Some("model"),
        ("phases", Some(0)) => Some("warmup"),
        ("phases", _) => Some("profiling"),
        _ => None,
    };
    names.extend(shorthand.map(str::to_string));
    names
}

fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn find_key(lines: &[&str], from: usize, key: &str, index: Option<usize>) -> Option<usize> {
    let names = spellings(key, index);
    (from..lines.len()).find(|&line| {
        let content = lines[line].trim_start();
        let content = content.strip_prefix("- ").unwrap_or(content);
        if content.starts_with('#') {
            return false;
        }
        let Some((name, _)) = content.split_once(':') else {
            return false;
        };
        let name = name.trim().trim_matches(|c| c == '"' || c == '\'');
        names.iter().any(|candidate| candidate == name || snake_case(name) == *candidate)
    })
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The line of the `index`th `- ` entry of the list whose key is on `key_line`.
fn nth_item(lines: &[&str], key_line: usize, index: usize) -> Option<usize> {
    let key_indent = indent(lines[key_line]);
    let mut item_indent = None;
    let mut seen = 0;
    for (line, text) in lines.iter().enumerate().skip(key_line + 1) {
        if text.trim().is_empty() || text.trim_start().starts_with('#') {
            continue;
        }
        if indent(text) <= key_indent && !text.trim_start().starts_with("- ") {
            return None;
        }
        if !text.trim_start().starts_with("- ") {
            continue;
        }
        let this_indent = indent(text);
        if this_indent < key_indent {
            return None;
        }
        match item_indent {
            None => item_indent = Some(this_indent),
            Some(expected) if this_indent != expected => continue,
            Some(_) => {}
        }
        if seen == index {
            return Some(line);
        }
        seen += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::line_of;

    const TEXT: &str = "\
schemaVersion: \"2.0\"
benchmark:
  model: m
  endpoint:
    url: http://x
  phases:
    - name: warmup
      concurrency: 2
    - name: profiling
      gracePeriod: 5
      concurrency: 8
  artifacts:
    sliceDuration: 3
";

    #[test]
    fn keys_are_followed_down_list_entries_and_camel_case() {
        assert_eq!(line_of(TEXT, "benchmark.phases[1].concurrency"), Some(11));
        assert_eq!(line_of(TEXT, "benchmark.phases[0].concurrency"), Some(8));
        assert_eq!(line_of(TEXT, "benchmark.phases[1].grace_period"), Some(10));
        assert_eq!(line_of(TEXT, "benchmark.endpoint.urls"), Some(5));
        assert_eq!(line_of(TEXT, "benchmark.models"), Some(3));
        assert_eq!(line_of(TEXT, "benchmark.artifacts.slice_duration"), Some(13));
        assert_eq!(line_of(TEXT, "benchmark.artifacts.nowhere"), None);
    }

    #[test]
    fn warmup_and_profiling_shorthands_are_found() {
        let text = "benchmark:\n  warmup:\n    requests: 1\n  profiling:\n    requests: 2\n";
        assert_eq!(line_of(text, "benchmark.phases[0].requests"), Some(3));
        assert_eq!(line_of(text, "benchmark.phases[1].requests"), Some(5));
    }
}
