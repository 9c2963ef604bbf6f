//! Reading `multipart/form-data` bodies (the mock's upload routes): the boundary from the
//! content type, then each part's name, file name and bytes.

use http::HeaderMap;
use http::header::CONTENT_TYPE;

/// One part of a form.
#[derive(Debug)]
pub struct FormPart<'a> {
    pub name: &'a str,
    pub file_name: Option<&'a str>,
    pub bytes: &'a [u8],
}

/// Whether a request's content type says its body is a form.
pub fn is_form(headers: &HeaderMap) -> bool {
    let content_type = headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default();
    content_type.to_ascii_lowercase().starts_with("multipart/form-data")
}

/// The parts of a form body, or why it is not one.
pub fn parse<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> Result<Vec<FormPart<'a>>, String> {
    let content_type = headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default();
    if !content_type.to_ascii_lowercase().starts_with("multipart/form-data") {
        return Err(format!("expected a multipart/form-data body, got content-type {content_type:?}"));
    }
    let boundary = content_type
        .split(';')
        .filter_map(|parameter| parameter.trim().strip_prefix("boundary="))
        .next()
        .map(|boundary| boundary.trim_matches('"'))
        .filter(|boundary| !boundary.is_empty())
        .ok_or("the multipart content-type names no boundary")?;
    let delimiter = format!("--{boundary}");
    let mut sections = split(body, delimiter.as_bytes()).into_iter();
    sections.next(); // The preamble before the first boundary.
    let mut parts = Vec::new();
    for section in sections {
        if section.starts_with(b"--") {
            return Ok(parts);
        }
        parts.push(part(section)?);
    }
    Err("the form has no closing boundary".into())
}

/// The text of a part named `name`, if any.
pub fn text<'a>(parts: &'a [FormPart<'a>], name: &str) -> Option<&'a str> {
    parts.iter().find(|part| part.name == name).and_then(|part| std::str::from_utf8(part.bytes).ok())
}

/// `body` cut at every `delimiter`.
fn split<'a>(body: &'a [u8], delimiter: &[u8]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at + delimiter.len() <= body.len() {
        if &body[at..at + delimiter.len()] == delimiter {
            pieces.push(&body[start..at]);
            at += delimiter.len();
            start = at;
        } else {
            at += 1;
        }
    }
    pieces.push(&body[start..]);
    pieces
}

/// One section between boundaries: `\r\n`, headers, a blank line, the content, `\r\n`.
fn part(section: &[u8]) -> Result<FormPart<'_>, String> {
    let section = section.strip_prefix(b"\r\n").ok_or("a form boundary is not followed by a line break")?;
    let header_end =
        section.windows(4).position(|window| window == b"\r\n\r\n").ok_or("a form part has no blank line")?;
    let head = std::str::from_utf8(&section[..header_end]).map_err(|_| "a form part's headers are not UTF-8")?;
    let content = &section[header_end + 4..];
    let bytes = content.strip_suffix(b"\r\n").ok_or("a form part does not end with a line break")?;
    let disposition = head
        .split("\r\n")
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim().eq_ignore_ascii_case("content-disposition").then_some(value)
        })
        .ok_or("a form part has no Content-Disposition")?;
    let parameter = |key: &str| {
        disposition
            .split(';')
            .filter_map(|item| item.trim().strip_prefix(key)?.strip_prefix('='))
            .map(|value| value.trim_matches('"'))
            .next()
    };
    let name = parameter("name").ok_or("a form part has no name")?;
    Ok(FormPart { name, file_name: parameter("filename"), bytes })
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn parts_are_read_with_their_names_and_files() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("multipart/form-data; boundary=XyZ"));
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm1\r\n\
                     --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n\x00\r\n-\r\n\
                     --XyZ--\r\n";
        let parts = parse(&headers, body).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(text(&parts, "model"), Some("m1"));
        assert_eq!((parts[1].name, parts[1].file_name, parts[1].bytes), ("file", Some("a.wav"), &b"\x00\r\n-"[..]));
    }

    #[test]
    fn bodies_that_are_not_forms_are_refused() {
        let mut headers = HeaderMap::new();
        assert!(parse(&headers, b"{}").unwrap_err().contains("expected a multipart/form-data body"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("multipart/form-data; boundary=B"));
        assert!(parse(&headers, b"--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n").is_err());
    }
}
