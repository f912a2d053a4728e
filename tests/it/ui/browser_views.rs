//! The supervisor's views in headless Chromium: a tree row opens its folder and stays open
//! on Back; writes go to the branch picked in the header; a banner says when the page shows
//! the past and the header follows command-line writes; the Agents view; Compare from the
//! merge base; a merge preview with contents and the merge's commit; history by agent;
//! proofs; focus after navigation; axe-core finds no violation in the light or dark theme;
//! and a commit of 100,000 changes paints a bounded page.
//!
//! Needs what `browser.rs` needs, and axe-core from npm in `tests/ui/node_modules`
//! (`npm ci --prefix tests/ui`); skips saying so without them.

use std::path::{Path, PathBuf};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use super::browser::{click, console_errors, fill, text, until, Driver};
use super::supervise::with_agents;
use super::{cli_at, Ui, T0};
use crate::common::{on_path, require};

/// chromedriver, Chromium and axe-core, or a skip.
pub(super) fn tools() -> Option<(PathBuf, PathBuf, String)> {
    let install = "(Debian: apt-get install chromium chromium-driver)";
    let driver = require(
        on_path(&["chromedriver"]),
        &format!("no chromedriver on PATH {install}"),
    )?;
    let chromium = require(
        on_path(&["chromium", "chromium-browser", "google-chrome"]),
        &format!("no chromium on PATH {install}"),
    )?;
    let axe =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/node_modules/axe-core/axe.min.js");
    let axe = require(
        std::fs::read_to_string(&axe).ok(),
        "no axe-core in tests/ui/node_modules (npm ci --prefix tests/ui)",
    )?;
    Some((driver, chromium, axe))
}

/// A WebDriver session of headless Chromium with its own `profile` directory.
pub(super) async fn session(driver: &Driver, chromium: &Path, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,860",
                     "--no-first-run", "--no-default-browser-check",
                     format!("--user-data-dir={}", profile.display())],
        }),
    );
    caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

/// Sends a DevTools command through chromedriver.
pub(super) async fn devtools(driver: &str, c: &Client, cmd: &str, params: Value) {
    let sid = c.session_id().await.unwrap().expect("a session");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let res = http
        .post(format!("{driver}/session/{sid}/goog/cdp/execute"))
        .header("Content-Type", "application/json")
        .body(json!({"cmd": cmd, "params": params}).to_string())
        .send()
        .await
        .expect("a DevTools command");
    assert!(
        res.status().is_success(),
        "{cmd}: {}",
        res.text().await.unwrap()
    );
}

/// Runs axe-core on the page (loading it first when needed): its violations, in short.
pub(super) async fn axe(c: &Client, source: &str) -> Vec<String> {
    let loaded = c
        .execute("return typeof window.axe === 'object'", vec![])
        .await
        .unwrap();
    if loaded != Value::Bool(true) {
        c.execute(&format!("{source}\n;return true;"), vec![])
            .await
            .expect("load axe-core");
    }
    let out = c
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
               .then(r => done(r.violations.map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))))
               .catch(e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await
        .expect("run axe-core");
    out.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// Goes to a view by its hash and waits until it has drawn.
pub(super) async fn view(c: &Client, base: &str, hash: &str) {
    let before = c
        .execute("return document.body.dataset.ready || ''", vec![])
        .await
        .unwrap();
    c.goto(&format!("{base}/{hash}")).await.unwrap();
    let before = serde_json::to_string(&before).unwrap();
    until(
        c,
        &format!("document.body.dataset.ready && document.body.dataset.ready !== {before} && !document.querySelector('main[aria-busy]')"),
        hash,
    )
    .await;
}

#[test]
fn the_supervisors_views_in_a_real_browser() {
    let Some((chromedriver, chromium, axe_source)) = tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = with_agents(dir.path());
    let ui = Ui::start(&store, &[("MEMOIR_NOW", "1767300000")]);
    let driver = Driver::start(&chromedriver);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = session(&driver, &chromium, &dir.path().join("profile")).await;
        let base = &ui.base;

        // The page names its store; focus lands on the view's heading.
        view(&c, base, "#/tree").await;
        let title = c.execute("return document.title", vec![]).await.unwrap();
        assert_eq!(title, "Tree · store · memoir");
        assert!(text(&c, "#store-path").await.ends_with("/store"));
        let focused = c.execute("return document.activeElement.tagName", vec![]).await.unwrap();
        assert_eq!(focused, "H2");

        // A click on a folder's name opens it; it stays open after a memory and Back.
        click(&c, "#tree li[data-path='preferences'] > .row .name").await;
        text(&c, "li[data-path='preferences.coding'] .count").await;
        click(&c, "li[data-path='preferences.editor'] a.open").await;
        text(&c, "#memory-content").await;
        c.back().await.unwrap();
        until(&c, "location.hash.startsWith('#/tree')", "back on the tree").await;
        until(&c, "(document.querySelector(\"#tree li[data-path='preferences']\")||{getAttribute(){}}).getAttribute('aria-expanded') === 'true'", "the folder kept open").await;
        assert!(text(&c, "li[data-path='preferences.editor'] .preview").await.starts_with("uses helix now"));

        // Writes go to the branch picked in the header, and the page says so.
        view(&c, base, "#/actions?rev=agent-1").await;
        assert_eq!(text(&c, "#remember-form .write-branch").await, "agent-1");
        fill(&c, "#rem-path", "ui.picked.branch").await;
        fill(&c, "#rem-content", "written on the picked branch").await;
        click(&c, "#rem-submit").await;
        assert!(text(&c, "#action-result .ok").await.contains("on branch agent-1"));
        let (_, on) = cli_at(&store, T0, &["get", "ui.picked.branch", "--branch", "agent-1"]);
        assert_eq!(on["items"][0]["found"], true);
        let (_, main) = cli_at(&store, T0, &["get", "ui.picked.branch"]);
        assert_eq!(main["items"][0]["found"], false);
        // Forget from the memory page, on the picked branch, after a confirmation that
        // shows the content and the branch.
        view(&c, base, "#/memory?key=agents.one.fact&rev=agent-1").await;
        click(&c, "#memory-forget").await;
        assert_eq!(text(&c, "#forget-dialog #forget-branch").await, "agent-1");
        assert_eq!(text(&c, "#forget-content").await, "agent one learned this");
        click(&c, "#forget-dialog-confirm").await;
        assert!(text(&c, "#memory-result .ok").await.contains("Delete agents.one.fact"));
        let (_, gone) = cli_at(&store, T0, &["get", "agents.one.fact", "--branch", "agent-1"]);
        assert_eq!(gone["items"][0]["found"], false);

        // A typed revision shows the past, and says so.
        view(&c, base, "#/tree?at=HEAD~2").await;
        let banner = text(&c, "#past-banner").await;
        assert!(banner.starts_with("Past.") && banner.contains("HEAD~2"), "{banner}");
        let label = text(&c, "#time-label").await;
        assert!(!label.starts_with("latest"), "{label}");
        click(&c, "#past-latest").await;
        until(&c, "document.getElementById('past-banner').hidden", "the banner gone").await;
        // A write from the command line moves the slider's label to it.
        let (code, out) = cli_at(&store, T0, &["remember", "from an agent's shell", "-p", "cli.fresh"]);
        assert_eq!(code, 0, "{out}");
        until(&c, "document.getElementById('time-label').textContent.includes('Store cli.fresh')", "the label follows the write").await;

        // The Agents view.
        view(&c, base, "#/agents").await;
        until(&c, "document.querySelectorAll('#agents tbody tr').length === 3", "three rows").await;
        let row = text(&c, "#agents tr[data-actor='agent-1']").await;
        assert!(row.contains("agent-1") && row.contains("hook"), "{row}");

        // History by agent, over every branch.
        view(&c, base, "#/history?actor=agent-2&all=1").await;
        until(&c, "document.querySelectorAll('#log tbody tr').length === 1", "one commit").await;
        assert!(text(&c, "#log tbody tr").await.contains("agent-2"));

        // Compare: what agent-1 adds since it left main, not main's later writes removed.
        view(&c, base, "#/compare?from=main&to=agent-1").await;
        until(&c, "document.querySelector('#diff-stat') && !document.querySelector('#diff-stat').textContent.startsWith('Counting')", "the counts").await;
        let stat = text(&c, "#diff-stat").await;
        assert!(stat.contains("2 added") && stat.contains("0 removed"), "{stat}");
        text(&c, "#diff .change[data-key='default:agents.one.more']").await;

        // A merge preview shows contents; the merge links its commit and the preview is redone.
        view(&c, base, "#/branches").await;
        let source = c.wait().for_element(Locator::Css("#merge-source")).await.unwrap();
        source.select_by_value("agent-2").await.unwrap();
        click(&c, "#merge-source ~ button[type=submit]").await;
        let change = text(&c, "#merge-changes tr[data-key='default:agents.two.fact']").await;
        assert!(change.contains("agent two helix notes"), "{change}");
        let mut violations = axe(&c, &axe_source).await;
        click(&c, "#merge-run").await;
        text(&c, "#merge-result #merge-commit").await;
        until(&c, "document.getElementById('merge-kind').textContent.includes('up to date')", "the preview redone").await;

        // Proofs name their key.
        view(&c, base, "#/actions").await;
        fill(&c, "#proof-key", "preferences.editor").await;
        click(&c, "#proof-form button[type=submit]").await;
        assert!(text(&c, "#action-result .ok").await.starts_with("Proof of default:preferences.editor"));
        click(&c, "#verify-submit").await;
        until(&c, "document.querySelector('#action-result .ok').textContent.startsWith('Valid: default:preferences.editor')", "verified").await;

        // axe-core: every view, light then dark.
        let views = [
            "#/tree", "#/memory?key=preferences.editor", "#/history?all=1", "#/compare?from=main&to=agent-2",
            "#/branches", "#/agents", "#/search?q=helix", "#/stats", "#/actions", "#/tree?at=HEAD~3",
        ];
        for theme in ["light", "dark"] {
            devtools(&driver.url, &c, "Emulation.setEmulatedMedia", json!({"features": [{"name": "prefers-color-scheme", "value": theme}]})).await;
            for v in views {
                view(&c, base, v).await;
                if v.starts_with("#/tree") {
                    click(&c, "#tree li[data-path='preferences'] > .row").await;
                    text(&c, "li[data-path='preferences.coding']").await;
                }
                violations.extend(axe(&c, &axe_source).await.into_iter().map(|x| format!("{theme} {v}: {x}")));
            }
        }
        assert!(violations.is_empty(), "axe-core violations: {violations:#?}");

        let page: Value = c.execute("return window.__memoirErrors", vec![]).await.unwrap();
        assert_eq!(page, json!([]), "errors on the page");
        let console = console_errors(&driver.url, &c).await;
        assert!(console.is_empty(), "console errors: {console:?}");
        c.close().await.unwrap();
    });
}

#[test]
fn a_commit_of_100000_changes_paints_a_bounded_page() {
    let Some((chromedriver, chromium, _)) = tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = super::seeded(dir.path());
    let n = 100_000;
    let mut lines = String::with_capacity(n * 120);
    for i in 0..n {
        lines.push_str(
            &json!({"key": format!("bulk.g{:02}.k{i:06}", i % 50), "namespace": "default",
                    "content": format!("bulk memory {i}"), "confidence": 1.0, "timestamp": 1767225600.0})
            .to_string(),
        );
        lines.push('\n');
    }
    let file = dir.path().join("bulk.jsonl");
    std::fs::write(&file, lines).unwrap();
    let (code, out) = cli_at(&store, T0 + 86_400, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (_, log) = cli_at(&store, T0, &["log", "-n", "1"]);
    let id = log["commits"][0]["hash"].as_str().unwrap().to_string();
    // More commits than the slider's window of 300, made through the library.
    {
        use memoir::key::Key;
        use memoir::memory::{Entry, Record};
        use memoir::prolly::Edit;
        use memoir::repo::{Repo, Signature};
        use memoir::store::{OpenOptions, Store};
        let repo = Repo::open(Store::open(&store, &OpenOptions::default()).unwrap()).unwrap();
        let key = Key::new("default", "bulk.counter").unwrap();
        for i in 0..320 {
            let rec = Record::new(&key, Entry::new(&format!("count {i}"), 1.0, 0.0), vec![]);
            let v = repo.objects().write(&rec.to_blob().unwrap()).unwrap();
            let sig = Signature::new("Tester <t@example.org>", T0 + 2 * 86_400 + i);
            repo.commit(
                "main",
                vec![Edit::Put(key.encode(), v)],
                &sig,
                &format!("count {i}"),
            )
            .unwrap();
        }
    }
    let ui = Ui::start(&store, &[]);
    let driver = Driver::start(&chromedriver);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = session(&driver, &chromium, &dir.path().join("profile")).await;
        view(&c, &ui.base, "#/stats").await;
        let start = std::time::Instant::now();
        c.goto(&format!("{}/#/commit?id={id}", ui.base))
            .await
            .unwrap();
        until(
            &c,
            "document.querySelectorAll('#diff-list .change').length === 100",
            "the first page",
        )
        .await;
        let painted = start.elapsed();
        until(
            &c,
            "document.getElementById('diff-stat').textContent.startsWith('100,000 key(s) changed')",
            "the counts",
        )
        .await;
        let nodes = c
            .execute("return document.getElementsByTagName('*').length", vec![])
            .await
            .unwrap();
        let nodes = nodes.as_u64().unwrap();
        assert!(nodes < 5000, "{nodes} DOM nodes");
        // The next page, then a patch on demand.
        click(&c, "#diff-more").await;
        until(
            &c,
            "document.querySelectorAll('#diff-list .change').length === 200",
            "the second page",
        )
        .await;
        click(&c, "#diff-list .change summary").await;
        let patch = text(&c, "#diff-list .change .patch").await;
        assert!(patch.contains("+bulk memory 0"), "{patch}");
        // The slider reaches the whole history: its oldest step moves its window back.
        view(&c, &ui.base, "#/tree").await;
        let slider = c.find(Locator::Css("#time-slider")).await.unwrap();
        slider.send_keys("\u{E011}").await.unwrap();
        until(&c, "location.hash.includes('at=') && !document.getElementById('past-banner').hidden", "a step back").await;
        until(&c, "document.getElementById('time-slider').value === document.getElementById('time-slider').max", "the window moved").await;
        let slider = c.find(Locator::Css("#time-slider")).await.unwrap();
        slider.send_keys("\u{E011}").await.unwrap();
        until(&c, "document.getElementById('past-banner').textContent.includes('Initialize memoir store')", "the first commit").await;
        // A level of 2,000 children pages on past the first 1,000.
        click(&c, "#rev-latest").await;
        until(&c, "document.getElementById('past-banner').hidden", "the latest").await;
        click(&c, "#tree li[data-path='bulk'] > .row").await;
        click(&c, "li[data-path='bulk.g00'] > .row").await;
        until(&c, "document.querySelectorAll(\"li[data-path='bulk.g00'] > ul > li[data-path]\").length === 1000", "a page of 1,000").await;
        let more = text(&c, "li[data-path='bulk.g00'] > ul > li.more").await;
        assert!(more.contains("(1,000 more)"), "{more}");
        click(&c, "li[data-path='bulk.g00'] > ul > li.more").await;
        until(&c, "document.querySelectorAll(\"li[data-path='bulk.g00'] > ul > li[data-path]\").length === 2000", "all 2,000").await;
        // Speed is the benchmark's to judge; this says what it saw.
        eprintln!(
            "commit of {n} changes: first page in {} ms, {nodes} DOM nodes",
            painted.as_millis()
        );
        c.close().await.unwrap();
    });
}
