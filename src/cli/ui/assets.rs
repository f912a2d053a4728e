//! The page and its assets, embedded in the binary at build time (plain HTML, CSS and
//! JavaScript: no build step, no framework). The page carries the launch token in a `meta`
//! element, which its script sends with every write.

use hyper::body::Bytes;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const VIEWS: &str = include_str!("assets/views.js");
const STYLE: &str = include_str!("assets/style.css");
const ICON: &str = include_str!("assets/icon.svg");

/// The placeholder in `index.html` replaced by the launch token.
const TOKEN_SLOT: &str = "{{TOKEN}}";

/// The content type and bytes served at `path`, if any (`/` is the page, with `token`).
pub fn asset(path: &str, token: &str) -> Option<(&'static str, Bytes)> {
    Some(match path {
        "/" | "/index.html" => (
            "text/html; charset=utf-8",
            Bytes::from(INDEX.replace(TOKEN_SLOT, token)),
        ),
        "/app.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(SCRIPT.as_bytes()),
        ),
        "/views.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(VIEWS.as_bytes()),
        ),
        "/style.css" => (
            "text/css; charset=utf-8",
            Bytes::from_static(STYLE.as_bytes()),
        ),
        "/icon.svg" | "/favicon.ico" => ("image/svg+xml", Bytes::from_static(ICON.as_bytes())),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_the_token_once() {
        let (kind, page) = asset("/", "0123abcd").unwrap();
        assert!(kind.starts_with("text/html"));
        let page = String::from_utf8(page.to_vec()).unwrap();
        assert_eq!(page.matches("0123abcd").count(), 1);
        assert!(!page.contains(TOKEN_SLOT));
        assert!(asset("/app.js", "t").is_some());
        assert!(asset("/nothing", "t").is_none());
    }
}
