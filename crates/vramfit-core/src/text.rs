//! Messages as the shells show them: the core's texts (verdicts, warnings, findings, fixes)
//! quote flags and names between backticks, `` `--max-model-len 7000` ``; a terminal prints
//! them as they are, the page shows the quoted part as code.
//!
//! Only backticks are read, nothing else of Markdown. A backtick without a partner, and an
//! empty pair, stay in the text. The spans borrow from the message, so whatever a name holds
//! (`<script>` included) stays text for the shell to show as text.

/// A piece of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span<'a> {
    /// Plain text.
    Text(&'a str),
    /// What stood between a pair of backticks (without them).
    Code(&'a str),
}

/// Splits a message into plain and code spans. No span is empty; plain spans never touch.
///
/// # Example
/// ```
/// use vramfit_core::text::{spans, Span};
/// assert_eq!(
///     spans("use `--max-model-len 7000` or ` alone"),
///     [Span::Text("use "), Span::Code("--max-model-len 7000"), Span::Text(" or ` alone")]
/// );
/// ```
pub fn spans(message: &str) -> Vec<Span<'_>> {
    let mut out = Vec::new();
    // Start of the plain text not yet pushed, and where to look for the next backtick.
    let (mut plain, mut from) = (0, 0);
    while let Some(open) = message[from..].find('`').map(|i| from + i) {
        let Some(close) = message[open + 1..].find('`').map(|i| open + 1 + i) else {
            break;
        };
        if close > open + 1 {
            if open > plain {
                out.push(Span::Text(&message[plain..open]));
            }
            out.push(Span::Code(&message[open + 1..close]));
            plain = close + 1;
        }
        from = close + 1;
    }
    if plain < message.len() {
        out.push(Span::Text(&message[plain..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{spans, Span::Code, Span::Text};

    #[test]
    fn backtick_pairs_are_code() {
        assert_eq!(
            spans("will not start — use `--tensor-parallel-size 2`, or `--kv-cache-dtype fp8`"),
            [
                Text("will not start — use "),
                Code("--tensor-parallel-size 2"),
                Text(", or "),
                Code("--kv-cache-dtype fp8"),
            ]
        );
        assert_eq!(spans("`a``b`"), [Code("a"), Code("b")]);
        assert_eq!(spans("` `"), [Code(" ")]);
    }

    #[test]
    fn text_without_backticks_is_one_span() {
        assert_eq!(spans("fits"), [Text("fits")]);
        assert_eq!(spans(""), []);
    }

    #[test]
    fn an_unbalanced_backtick_stays_text() {
        assert_eq!(spans("`"), [Text("`")]);
        assert_eq!(spans("a `b"), [Text("a `b")]);
        assert_eq!(spans("`a` b `c"), [Code("a"), Text(" b `c")]);
        assert_eq!(
            spans("it's `x` and `y` and `"),
            [
                Text("it's "),
                Code("x"),
                Text(" and "),
                Code("y"),
                Text(" and `"),
            ]
        );
    }

    #[test]
    fn an_empty_pair_stays_text() {
        assert_eq!(spans("``"), [Text("``")]);
        assert_eq!(spans("a `` b `c`"), [Text("a `` b "), Code("c")]);
        assert_eq!(spans("``x`"), [Text("``x`")]);
    }

    #[test]
    fn markup_stays_text() {
        let m = "unknown model `<script>alert(1)</script>`; showing `<img src=x onerror=y>` **b**";
        assert_eq!(
            spans(m),
            [
                Text("unknown model "),
                Code("<script>alert(1)</script>"),
                Text("; showing "),
                Code("<img src=x onerror=y>"),
                Text(" **b**"),
            ]
        );
    }

    #[test]
    fn the_spans_give_back_the_message_less_its_pair_backticks() {
        for m in ["a `b` c", "``", "`x", "é `ü` ß", "`<a>`` `", ""] {
            let joined: String = spans(m)
                .iter()
                .map(|s| match s {
                    Text(t) => (*t).to_owned(),
                    Code(c) => format!("`{c}`"),
                })
                .collect();
            assert_eq!(joined, m);
        }
    }
}
