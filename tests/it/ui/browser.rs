//! `memoir ui` in a real browser: headless Chromium driven over WebDriver (chromedriver,
//! spoken to with `fantoccini`), on a seeded store, everything on 127.0.0.1. The test reads
//! what a person reads: tree counts, a memory's blame, an older value after stepping the
//! time slider, a commit's diff, search hits, a merge preview's conflict; it remembers and
//! forgets from the page and checks the CLI reads the result; and it fails on any error the
//! page or the browser's console met.
//!
//! It needs `chromium` and `chromedriver` on PATH (Debian: `apt-get install chromium
//! chromium-driver`) and skips saying so without them (see `crate::common::require`). With
//! `MEMOIR_UI_SCREENSHOTS=1` it writes the README's screenshots to `docs/ui/`.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use super::{cli_at, seeded, Ui, T0};
use crate::common::{on_path, require};

/// chromedriver on a free loopback port; killed when dropped.
pub(super) struct Driver {
    child: Child,
    pub(super) url: String,
}

impl Driver {
    pub(super) fn start(program: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(program)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `script` (a JS expression) until it is truthy; its last value otherwise panics.
pub(super) async fn until(c: &Client, script: &str, what: &str) -> Value {
    let start = Instant::now();
    loop {
        let v = c
            .execute(&format!("return ({script});"), vec![])
            .await
            .expect("run script");
        let truthy = match &v {
            Value::Null | Value::Bool(false) => false,
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        };
        if truthy {
            return v;
        }
        if start.elapsed() > Duration::from_secs(15) {
            let errors = c.execute("return window.__memoirErrors", vec![]).await;
            let page = c
                .execute("return location.hash + ' ' + document.querySelector('main').innerText.slice(0, 400)", vec![])
                .await;
            panic!(
                "timed out waiting for {what} ({script}): last {v}; page errors {errors:?}; page {page:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Text of the first element matching a CSS selector, once there.
pub(super) async fn text(c: &Client, css: &str) -> String {
    let sel = serde_json::to_string(css).unwrap();
    until(c, &format!("document.querySelector({sel})"), css).await;
    c.execute(
        &format!("return document.querySelector({sel}).textContent;"),
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap_or_default()
    .to_string()
}

pub(super) async fn click(c: &Client, css: &str) {
    c.wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

pub(super) async fn fill(c: &Client, css: &str, value: &str) {
    let el = c
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    el.clear().await.unwrap();
    el.send_keys(value).await.unwrap();
}

/// Writes a screenshot of the page to `docs/ui/<name>.png` when `MEMOIR_UI_SCREENSHOTS=1`.
async fn shot(c: &Client, name: &str) {
    if std::env::var("MEMOIR_UI_SCREENSHOTS").as_deref() != Ok("1") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// The browser's console log (chromedriver's `goog:loggingPrefs`), severe entries only.
pub(super) async fn console_errors(driver: &str, c: &Client) -> Vec<String> {
    let sid = c.session_id().await.unwrap().expect("a session");
    let http = {
        // The crate's S3 client builds reqwest with rustls and no default provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder().no_proxy().build().unwrap()
    };
    let res = http
        .post(format!("{driver}/session/{sid}/se/log"))
        .header("Content-Type", "application/json")
        .body(json!({"type": "browser"}).to_string())
        .send()
        .await
        .expect("ask chromedriver for the console log");
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    body["value"]
        .as_array()
        .unwrap_or_else(|| panic!("no console log: {body}"))
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_interface_in_a_real_browser() {
    let install = "(Debian: apt-get install chromium chromium-driver)";
    let Some(chromedriver) = require(
        on_path(&["chromedriver"]),
        &format!("no chromedriver on PATH {install}"),
    ) else {
        return;
    };
    let Some(chromium) = require(
        on_path(&["chromium", "chromium-browser", "google-chrome"]),
        &format!("no chromium on PATH {install}"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[("MEMOIR_NOW", "1767300000")]);
    let driver = Driver::start(&chromedriver);
    let profile = dir.path().join("profile");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = super::browser_views::session(&driver, &chromium, &profile).await;
        let base = &ui.base;

        // Tree: counts at the top, and of a node's children once expanded.
        c.goto(&format!("{base}/#/tree")).await.unwrap();
        assert_eq!(text(&c, "#tree li[data-path='preferences'] .count").await, "3");
        assert_eq!(text(&c, "#tree li[data-path='projects'] .count").await, "1");
        assert_eq!(text(&c, "#tree-total").await, "4 memories");
        // The tree's first paint took three API requests: the level, the branches, the log.
        let first_paint = c
            .execute(
                "return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname).filter(p => p.startsWith('/api/'))",
                vec![],
            )
            .await
            .unwrap();
        let mut paths: Vec<&str> = first_paint.as_array().unwrap().iter().filter_map(Value::as_str).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["/api/branches", "/api/log", "/api/tree"], "{first_paint}");
        click(&c, "#tree li[data-path='preferences'] .toggle").await;
        assert_eq!(text(&c, "li[data-path='preferences.coding'] .count").await, "2");
        click(&c, "li[data-path='preferences.coding'] .toggle").await;
        text(&c, "li[data-path='preferences.coding.testing'] a.open").await;
        // The keyboard moves through the tree.
        c.execute("document.querySelector('#tree [role=treeitem]').focus()", vec![])
            .await
            .unwrap();
        c.active_element().await.unwrap().send_keys("\u{E015}").await.unwrap();
        let focused = until(&c, "document.activeElement.dataset.path", "focus").await;
        assert_eq!(focused, "preferences.coding");
        shot(&c, "tree").await;

        // Memory: its content and who changed it.
        c.goto(&format!("{base}/#/memory?key=preferences.editor")).await.unwrap();
        assert!(text(&c, "#memory-content").await.starts_with("uses helix now"));
        until(&c, "document.querySelectorAll('#blame tbody tr').length === 2", "blame rows").await;
        assert_eq!(text(&c, "#blame tbody tr td.author").await, crate::common::AUTHOR);
        until(&c, "document.querySelectorAll('#blame-lines tbody tr').length === 2", "line blame").await;
        shot(&c, "memory").await;

        // The time slider: two steps back, the older value.
        let slider = c.find(Locator::Css("#time-slider")).await.unwrap();
        slider.send_keys("\u{E012}").await.unwrap();
        until(&c, "location.hash.includes('at=')", "the slider sets the revision").await;
        until(&c, "document.querySelector('#memory-content')", "the memory at the older commit").await;
        slider.send_keys("\u{E012}").await.unwrap();
        until(
            &c,
            "(document.querySelector('#memory-content')||{}).textContent === 'uses vim'",
            "the older value",
        )
        .await;
        click(&c, "#rev-latest").await;
        until(&c, "!location.hash.includes('at=')", "back to the latest").await;

        // History: the graph, then a commit's diff.
        c.goto(&format!("{base}/#/history")).await.unwrap();
        until(&c, "document.querySelectorAll('#log tbody tr').length === 7", "the log").await;
        until(&c, "document.querySelectorAll('#log svg.graph').length === 7", "the graph").await;
        shot(&c, "history").await;
        click(&c, "#log tbody tr:nth-child(2) a").await;
        let change = text(&c, "#diff .change[data-key='default:preferences.editor']").await;
        assert!(change.contains("modified"), "{change}");
        // The patch is fetched when its change is opened.
        click(&c, "#diff .change[data-key='default:preferences.editor'] summary").await;
        let patch = text(&c, "#diff .patch").await;
        assert!(patch.contains("+uses helix now") && patch.contains("-uses vim"), "{patch}");
        click(&c, "#sbs-toggle").await;
        text(&c, "#sbs-toggle[aria-pressed='true']").await;
        click(&c, "#diff .change[data-key='default:preferences.editor'] summary").await;
        text(&c, "#diff .patch.sbs").await;
        shot(&c, "commit").await;

        // Search: hits with the terms marked.
        c.goto(&format!("{base}/#/search")).await.unwrap();
        fill(&c, "#search-q", "helix keymap").await;
        click(&c, "form[role=search] button[type=submit]").await;
        assert_eq!(text(&c, "#search-results li mark").await.to_lowercase(), "helix");
        assert!(text(&c, "#search-results li a").await.contains("preferences.editor"));
        shot(&c, "search").await;

        // Remember from the page (with completion of existing keys), then the CLI reads it.
        c.goto(&format!("{base}/#/actions")).await.unwrap();
        fill(&c, "#rem-path", "preferences.co").await;
        until(
            &c,
            "[...document.querySelectorAll('#rem-paths option')].some(o => o.value === 'preferences.coding')",
            "key completion",
        )
        .await;
        fill(&c, "#rem-path", "ui.browser.note").await;
        fill(&c, "#rem-content", "remembered in the browser").await;
        click(&c, "#rem-submit").await;
        let done = text(&c, "#action-result .ok").await;
        assert!(done.contains("default:ui.browser.note"), "{done}");
        let (code, got) = cli_at(&store, T0, &["get", "ui.browser.note"]);
        assert_eq!(code, 0, "{got}");
        assert_eq!(got["items"][0]["value"]["content"], "remembered in the browser");

        // Forget, with confirmation; the CLI no longer finds it.
        fill(&c, "#forget-key", "ui.browser.note").await;
        click(&c, "#forget-submit").await;
        click(&c, "#forget-confirm").await;
        until(
            &c,
            "(document.querySelector('#action-result .ok')||{textContent:''}).textContent.includes('Delete ui.browser.note')",
            "the forget's answer",
        )
        .await;
        let (code, _) = cli_at(&store, T0, &["get", "ui.browser.note"]);
        assert_eq!(code, 2);

        // Merge preview of a conflicting branch.
        c.goto(&format!("{base}/#/branches")).await.unwrap();
        let source = c.wait().for_element(Locator::Css("#merge-source")).await.unwrap();
        source.select_by_value("side").await.unwrap();
        click(&c, "#merge-source ~ button[type=submit]").await;
        let row = text(&c, "#merge-conflicts tr[data-key='default:preferences.editor']").await;
        assert!(row.contains("uses emacs") && row.contains("uses vim"), "{row}");
        assert!(text(&c, "#merge-kind").await.contains("conflicted"));
        shot(&c, "merge-preview").await;

        // Statistics.
        c.goto(&format!("{base}/#/stats")).await.unwrap();
        assert_eq!(text(&c, "#stat-memories").await, "5");
        until(&c, "document.querySelector('svg.chart polyline')", "the growth chart").await;
        shot(&c, "stats").await;

        // No errors anywhere.
        let page: Value = c.execute("return window.__memoirErrors", vec![]).await.unwrap();
        assert_eq!(page, json!([]), "errors on the page");
        let console = console_errors(&driver.url, &c).await;
        assert!(console.is_empty(), "console errors: {console:?}");
        c.close().await.unwrap();
    });
    assert!(!ui.stderr().contains("error"), "{}", ui.stderr());
}
