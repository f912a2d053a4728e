//! HTML to text: a careful tag stripper.
//!
//! Tags and comments are removed; the contents of `script`, `style`, `head` (except its
//! `title`), `template`, `noscript`, `svg` and `iframe` are dropped; block elements end
//! paragraphs; `h1`..`h6` become Markdown headings (`#`..`######`) so that chunks break
//! before them; list items become `- ` lines; `pre` keeps its whitespace, elsewhere runs of
//! whitespace are one space; character references (named ones in common use, decimal and
//! hexadecimal) are decoded. Malformed markup never fails: what cannot be read as a tag is
//! text.

/// Elements whose content is not text for a reader.
const DROPPED: [&str; 8] = [
    "script", "style", "head", "template", "noscript", "svg", "iframe", "object",
];

/// Elements that start and end a paragraph.
const BLOCKS: [&str; 30] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "html",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "summary",
    "table",
    "title",
    "ul",
    "pre",
    "tbody",
];

/// The text of an HTML document.
pub fn to_text(html: &str) -> String {
    let mut w = Writer::default();
    let bytes = html.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let end = html[i..].find('<').map_or(html.len(), |n| i + n);
            w.text(&decode_entities(&html[i..end]));
            i = end;
            continue;
        }
        let rest = &html[i..];
        if let Some(body) = rest.strip_prefix("<!--") {
            i += 4 + body.find("-->").map_or(body.len(), |n| n + 3);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            i += rest.find('>').map_or(rest.len(), |n| n + 1);
            continue;
        }
        let Some(tag) = Tag::parse(rest) else {
            // A `<` that opens no tag is text.
            w.text("<");
            i += 1;
            continue;
        };
        i += tag.len;
        let name = tag.name.as_str();
        if !tag.closing && DROPPED.contains(&name) && !tag.self_closing {
            i = skip_element(html, i, name, &mut w);
            continue;
        }
        w.tag(&tag);
    }
    w.finish()
}

/// Skips the content of a dropped element opened just before `from`; returns where its
/// end tag ends. In `head`, the `title` is kept.
fn skip_element(html: &str, from: usize, name: &str, w: &mut Writer) -> usize {
    let lower = |s: &str| s.to_ascii_lowercase();
    let hay = lower(&html[from..]);
    let close = format!("</{name}");
    let end = hay.find(&close).map_or(html.len(), |n| from + n);
    if name == "head" {
        let head = &hay[..end - from];
        if let Some(t) = head.find("<title") {
            if let Some(gt) = head[t..].find('>') {
                let start = from + t + gt + 1;
                let stop = head[t..]
                    .find("</title")
                    .map_or(end, |n| from + t + n)
                    .max(start);
                w.paragraph();
                w.text(&decode_entities(&html[start..stop]));
                w.paragraph();
            }
        }
    }
    match html[end..].find('>') {
        Some(n) => end + n + 1,
        None => html.len(),
    }
}

/// A start or end tag.
struct Tag {
    /// Lower-case element name.
    name: String,
    closing: bool,
    self_closing: bool,
    /// Bytes of the tag, `<` to `>` inclusive.
    len: usize,
}

impl Tag {
    /// The tag at the start of `s` (which starts with `<`), if it is one: `<` or `</`
    /// followed by a letter; attributes may hold quoted `>`.
    fn parse(s: &str) -> Option<Tag> {
        let b = s.as_bytes();
        let mut i = 1;
        let closing = b.get(1) == Some(&b'/');
        if closing {
            i += 1;
        }
        if !b.get(i)?.is_ascii_alphabetic() {
            return None;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b':') {
            i += 1;
        }
        let name = s[start..i].to_ascii_lowercase();
        let mut quote: Option<u8> = None;
        while i < b.len() {
            match (quote, b[i]) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(b[i]),
                (None, b'>') => {
                    let self_closing = i > 0 && b[i - 1] == b'/';
                    return Some(Tag {
                        name,
                        closing,
                        self_closing,
                        len: i + 1,
                    });
                }
                (None, _) => {}
            }
            i += 1;
        }
        // An unterminated tag runs to the end of the document.
        Some(Tag {
            name,
            closing,
            self_closing: false,
            len: s.len(),
        })
    }
}

/// Builds the text: collapses whitespace outside `pre`, places paragraph breaks.
#[derive(Default)]
struct Writer {
    out: String,
    pre: usize,
    /// A space is owed before the next word.
    space: bool,
}

impl Writer {
    fn text(&mut self, t: &str) {
        if self.pre > 0 {
            self.out.push_str(t);
            return;
        }
        for (n, word) in t.split(|c: char| c.is_whitespace()).enumerate() {
            if n > 0 {
                self.space = true;
            }
            if word.is_empty() {
                continue;
            }
            if self.space && !self.out.is_empty() && !self.out.ends_with(['\n', ' ']) {
                self.out.push(' ');
            }
            self.space = false;
            self.out.push_str(word);
        }
    }

    fn newline(&mut self) {
        self.space = false;
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn paragraph(&mut self) {
        self.newline();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn tag(&mut self, tag: &Tag) {
        let name = tag.name.as_str();
        if let Some(level) = heading_level(name) {
            self.paragraph();
            if !tag.closing {
                self.out.push_str(&"#".repeat(level));
                self.out.push(' ');
            }
            return;
        }
        match name {
            "br" => self.newline(),
            "li" if !tag.closing => {
                self.newline();
                self.out.push_str("- ");
            }
            "li" | "tr" => self.newline(),
            "td" | "th" => self.space = true,
            "pre" => {
                self.paragraph();
                if tag.closing {
                    self.pre = self.pre.saturating_sub(1);
                } else if !tag.self_closing {
                    self.pre += 1;
                }
            }
            _ if BLOCKS.contains(&name) => self.paragraph(),
            _ => {}
        }
    }

    fn finish(self) -> String {
        let mut out = String::with_capacity(self.out.len());
        let mut blank = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.trim().is_empty() {
                blank += 1;
                continue;
            }
            if !out.is_empty() {
                out.push_str(if blank > 0 { "\n\n" } else { "\n" });
            }
            blank = 0;
            out.push_str(line);
        }
        out
    }
}

fn heading_level(name: &str) -> Option<usize> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(usize::from(d - b'0')),
        _ => None,
    }
}

/// Decodes character references: `&amp;`, `&#233;`, `&#xE9;` and the named ones in common
/// use; anything else is kept as written.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map(|n| n + 1);
        let decoded = end
            .filter(|&e| rest.as_bytes().get(e) == Some(&b';'))
            .and_then(|e| entity(&rest[1..e]).map(|c| (c, e + 1)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '\u{2014}',
        "ndash" => '\u{2013}',
        "hellip" => '\u{2026}',
        "copy" => '\u{a9}',
        "reg" => '\u{ae}',
        "trade" => '\u{2122}',
        "lsquo" => '\u{2018}',
        "rsquo" => '\u{2019}',
        "ldquo" => '\u{201c}',
        "rdquo" => '\u{201d}',
        "laquo" => '\u{ab}',
        "raquo" => '\u{bb}',
        "middot" => '\u{b7}',
        "bull" => '\u{2022}',
        "euro" => '\u{20ac}',
        "pound" => '\u{a3}',
        "deg" => '\u{b0}',
        "times" => '\u{d7}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_scripts_and_entities() {
        let html = r#"<!DOCTYPE html><html><head><title>Deploy &amp; run</title>
<style>p { color: red }</style><script>var a = "<p>no</p>";</script></head>
<body><h1 class="x">Install</h1><p>Run <b>cargo</b>   build&nbsp;now &lt;ok&gt; &#233;&#xE9; &bogus; a &amp b</p>
<!-- a comment <p>hidden</p> --><ul><li>one</li><li>two</li></ul>
<pre>  keep
   this</pre><p data-x="a>b">after</p></body></html>"#;
        let t = to_text(html);
        assert_eq!(
            t,
            "Deploy & run\n\n# Install\n\nRun cargo build now <ok> éé &bogus; a &amp b\n\n- one\n- two\n\n  keep\n   this\n\nafter"
        );
    }

    #[test]
    fn malformed_markup_is_text() {
        assert_eq!(to_text("a < b and 3<4"), "a < b and 3<4");
        assert_eq!(to_text("x <p unterminated"), "x");
        assert_eq!(to_text("<script>never closed"), "");
        assert_eq!(
            decode_entities("&#0; &#xFFFFFFFF; &"),
            "&#0; &#xFFFFFFFF; &"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// Any markup, however broken, gives text without a panic.
        #[test]
        fn any_markup_gives_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<", ">", "</", "<p>", "<h2>", "</h2>", "<script>", "</script>", "<head>",
                    "<title>", "&", "&amp;", "&#x", "&#233;", ";", "\"", "'", "é", "日", "<!--",
                    "-->", "<pre>", "</pre>", "text ", "\n",
                ]),
                0..200,
            ),
        ) {
            let html = parts.concat();
            let text = to_text(&html);
            proptest::prop_assert!(!text.contains("\n\n\n"));
        }
    }
}
