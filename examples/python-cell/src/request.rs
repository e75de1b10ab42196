//! What goes to the driver for one cell: the snippet and its inputs, framed by their lengths.
//!
//! One line of decimal byte counts, separated by spaces: the snippet's, then each input's name
//! and value in turn; then those texts, UTF-8, one after the other. Each input's value is the
//! JSON text the caller gave, which the driver decodes. Only lengths frame the texts, so no text
//! the caller or the snippet holds can change where another begins; and the driver needs no
//! JSON parser to read it (a cold cell's start is mostly its imports).

/// The request for `code` with `inputs` (name, JSON text).
pub fn encode(code: &str, inputs: &[(String, String)]) -> Vec<u8> {
    let mut header = code.len().to_string();
    let mut body = code.as_bytes().to_vec();
    for (name, value) in inputs {
        header.push_str(&format!(" {} {}", name.len(), value.len()));
        body.extend_from_slice(name.as_bytes());
        body.extend_from_slice(value.as_bytes());
    }
    header.push('\n');
    let mut out = header.into_bytes();
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_are_framed_by_their_byte_counts_whatever_they_hold() {
        let inputs = [
            ("a".to_owned(), "2".to_owned()),
            ("b".to_owned(), "\"x\n1 2\"".to_owned()),
        ];
        assert_eq!(
            encode("print(\"hé\")\n", &inputs),
            b"13 1 1 1 7\nprint(\"h\xc3\xa9\")\na2b\"x\n1 2\"".to_vec()
        );
        assert_eq!(encode("1+1", &[]), b"3\n1+1".to_vec());
        assert_eq!(encode("", &[]), b"0\n".to_vec());
    }
}
