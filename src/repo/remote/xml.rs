//! The little of XML an S3 answer needs read: the text of named elements without
//! attributes (`<Key>…</Key>`), found by their tags, and its five entities and character
//! references. An element that is not closed, or text that does not unescape, is absent;
//! nothing here panics or allocates more than the text it returns.

/// The raw contents of each `<tag>…</tag>` in `text`, in order (not nested in each other).
pub(super) fn all<'a>(text: &'a str, tag: &str) -> impl Iterator<Item = &'a str> + 'a {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find(&open)? + open.len();
        let len = rest[start..].find(&close)?;
        let inner = &rest[start..start + len];
        rest = &rest[start + len + close.len()..];
        Some(inner)
    })
}

/// The text of the first `<tag>…</tag>` in `text`, unescaped.
pub(super) fn first(text: &str, tag: &str) -> Option<String> {
    unescape(all(text, tag).next()?)
}

/// `s` with its entities (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`) and character references
/// (`&#NN;`, `&#xNN;`) replaced; `None` when one is malformed.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';')? + at;
        let entity = &rest[at + 1..end];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = match entity.strip_prefix("#x").or(entity.strip_prefix("#X")) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => entity.strip_prefix('#')?.parse().ok()?,
                };
                char::from_u32(code)?
            }
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>packs/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
<Contents><Key>packs/a&amp;b.pack</Key><LastModified>2026-11-29T23:00:00.000Z</LastModified>
<Size>12</Size></Contents><Contents><Key>packs/&#x3c;c&#62;</Key><Size>3</Size></Contents>
<NextContinuationToken>t/1==</NextContinuationToken></ListBucketResult>"#;

    #[test]
    fn reads_a_listing_page() {
        let items: Vec<&str> = all(PAGE, "Contents").collect();
        assert_eq!(items.len(), 2);
        assert_eq!(first(items[0], "Key").as_deref(), Some("packs/a&b.pack"));
        assert_eq!(first(items[0], "Size").as_deref(), Some("12"));
        assert_eq!(first(items[1], "Key").as_deref(), Some("packs/<c>"));
        assert_eq!(first(items[1], "LastModified"), None);
        assert_eq!(first(PAGE, "IsTruncated").as_deref(), Some("true"));
        assert_eq!(
            first(PAGE, "NextContinuationToken").as_deref(),
            Some("t/1==")
        );
    }

    #[test]
    fn malformed_text_is_absent() {
        assert_eq!(first("<Key>a&b</Key>", "Key"), None);
        assert_eq!(first("<Key>a&#xZZ;</Key>", "Key"), None);
        assert_eq!(first("<Key>a&#55296;</Key>", "Key"), None);
        assert_eq!(first("<Key>unclosed", "Key"), None);
        assert_eq!(
            first("<Error><Code>NoSuchKey</Code></Error>", "Code").as_deref(),
            Some("NoSuchKey")
        );
    }

    proptest! {
        #[test]
        fn any_text_is_read_without_panicking(text in ".{0,200}", tag in "[A-Za-z]{1,4}") {
            for inner in all(&text, &tag) {
                prop_assert!(inner.len() <= text.len());
            }
            let _ = first(&text, &tag);
        }
    }
}
