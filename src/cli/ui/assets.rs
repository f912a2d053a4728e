//! The page and its assets, embedded in the binary at build time (plain HTML, CSS and
//! JavaScript: no build step, no framework). The page carries the launch token in a `meta`
//! element, which its script sends with every write.

use std::path::Path;

use hyper::body::Bytes;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const VIEWS: &str = include_str!("assets/views.js");
const TREE: &str = include_str!("assets/tree.js");
const HISTORY: &str = include_str!("assets/history.js");
const GRAPH: &str = include_str!("assets/graph.js");
const STYLE: &str = include_str!("assets/style.css");
const ICON: &str = include_str!("assets/icon.svg");

/// The placeholder in `index.html` replaced by the launch token.
const TOKEN_SLOT: &str = "{{TOKEN}}";
/// The placeholders replaced by the store's directory name and its whole path, so the
/// page says which store it shows (title, header, footer) from its first paint.
const STORE_NAME_SLOT: &str = "{{STORE_NAME}}";
const STORE_PATH_SLOT: &str = "{{STORE_PATH}}";

/// The content type and bytes served at `path`, if any (`/` is the page, with `token` and
/// the store's path).
pub fn asset(path: &str, token: &str, store: &Path) -> Option<(&'static str, Bytes)> {
    Some(match path {
        "/" | "/index.html" => {
            let name = store
                .file_name()
                .map_or_else(|| store.to_string_lossy(), |n| n.to_string_lossy());
            let page = INDEX
                .replace(TOKEN_SLOT, token)
                .replace(STORE_NAME_SLOT, &html_text(&name))
                .replace(STORE_PATH_SLOT, &html_text(&store.to_string_lossy()));
            ("text/html; charset=utf-8", Bytes::from(page))
        }
        "/app.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(SCRIPT.as_bytes()),
        ),
        "/views.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(VIEWS.as_bytes()),
        ),
        "/tree.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(TREE.as_bytes()),
        ),
        "/history.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(HISTORY.as_bytes()),
        ),
        "/graph.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(GRAPH.as_bytes()),
        ),
        "/style.css" => (
            "text/css; charset=utf-8",
            Bytes::from_static(STYLE.as_bytes()),
        ),
        "/icon.svg" | "/favicon.ico" => ("image/svg+xml", Bytes::from_static(ICON.as_bytes())),
        _ => return None,
    })
}

/// `text` escaped for HTML text and attribute values.
fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_the_token_once() {
        let store = Path::new("/tmp/a <b>/mem");
        let (kind, page) = asset("/", "0123abcd", store).unwrap();
        assert!(kind.starts_with("text/html"));
        let page = String::from_utf8(page.to_vec()).unwrap();
        assert_eq!(page.matches("0123abcd").count(), 1);
        assert!(!page.contains(TOKEN_SLOT));
        assert!(page.contains("<title>mem · memoir</title>"), "{page}");
        assert!(page.contains("/tmp/a &lt;b&gt;/mem"));
        assert!(!page.contains("{{"));
        assert!(asset("/app.js", "t", store).is_some());
        assert!(asset("/nothing", "t", store).is_none());
    }
}
