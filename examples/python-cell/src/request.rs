//! What goes to the driver on standard input: one JSON object holding the snippet and its inputs.
//!
//! Everything is a JSON string written here, each input's value too (as the JSON text the
//! caller gave, which the driver decodes), so no text the caller or the snippet holds can change
//! the object's shape.

/// `{"code": <code>, "inputs": {<name>: <json text>, ...}}`.
pub fn encode(code: &str, inputs: &[(String, String)]) -> String {
    let mut out = String::from("{\"code\":");
    out.push_str(&string(code));
    out.push_str(",\"inputs\":{");
    for (i, (name, value)) in inputs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&string(name));
        out.push(':');
        out.push_str(&string(value));
    }
    out.push_str("}}");
    out
}

/// `text` as a JSON string literal.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snippet_and_the_inputs_are_strings_whatever_they_hold() {
        let inputs = [
            ("a".to_owned(), "2".to_owned()),
            ("b".to_owned(), "\"x\"}, \"code\": \"evil\"".to_owned()),
        ];
        assert_eq!(
            encode("print(\"hi\")\n\\\u{1}", &inputs),
            r#"{"code":"print(\"hi\")\n\\\u0001","inputs":{"a":"2","b":"\"x\"}, \"code\": \"evil\""}}"#
        );
        assert_eq!(encode("1+1", &[]), r#"{"code":"1+1","inputs":{}}"#);
    }
}
