//! memoir as a library: a program that uses the `Memoir` handle alone to create a store,
//! remember with a merge policy, read at an older revision, blame, merge two branches and
//! search. Every outcome serialises to the JSON `memoir --json` prints.
//!
//! `cargo run --example library`

use memoir::app::{
    Clock, MemoirResult, MergeRequest, MergeStrategy, Options, Outcome, ReadPoint, RememberRequest,
    SearchRequest, Sort, WriteAs,
};
use memoir::memory::MergePolicy;
use memoir::Memoir;

fn main() -> MemoirResult<()> {
    let dir = std::env::temp_dir().join(format!("memoir-library-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A fixed clock makes commit ids reproducible; a real program leaves the default.
    let options = Options {
        clock: Clock::fixed(1_767_225_600.0),
        ..Options::default()
    };
    let ada = WriteAs::author("Ada <ada@example.org>");
    let (memoir, created) = Memoir::create(&dir, options, &ada)?;
    println!("{}", created.message);

    // Remember, then add to the same key with the append policy.
    memoir.remember(
        &RememberRequest::new("Production runs PostgreSQL 16", &["infra.database"]),
        &ada,
    )?;
    let mut more = RememberRequest::new("Migrating to PostgreSQL 17 in March", &["infra.database"]);
    more.merge_policy = Some(MergePolicy::Append);
    let stored = memoir.remember(&more, &ada)?;
    println!("stored in commit {:?}", stored.commit_hash);

    // Read the past: HEAD~1 holds the first fact only.
    let then = memoir.get(&["infra.database".into()], None, &ReadPoint::at("HEAD~1"))?;
    let now = memoir.get(&["infra.database".into()], None, &ReadPoint::head())?;
    for (label, out) in [("HEAD~1", &then), ("HEAD", &now)] {
        let content = out.items[0].record.as_ref().map(|r| r.content());
        println!("{label}: {content:?}");
    }

    // Who taught me this, and when?
    let blame = memoir.blame("infra.database", None, &ReadPoint::head(), None, false)?;
    for e in &blame.entries {
        println!("{} {} {}", e.short_commit, e.author, e.message);
    }

    // An agent works on its own branch; the main line moves on; merge them.
    let agent = WriteAs {
        branch: Some("agent-1".into()),
        actor: Some("agent-1".into()),
        ..ada.clone()
    };
    memoir.remember(
        &RememberRequest::new("Try Playwright for UI tests", &["preferences.coding.ui"]),
        &agent,
    )?;
    memoir.remember(
        &RememberRequest::new(
            "CI must stay under ten minutes",
            &["preferences.ci.duration"],
        ),
        &ada,
    )?;
    let merged = memoir.merge(
        &MergeRequest {
            source: "agent-1".into(),
            into: None,
            strategy: Some(MergeStrategy::Union),
            ff_only: false,
        },
        &ada,
    )?;
    println!("{}", merged.message);

    // Lexical search, no model needed; the outcome is the CLI's JSON.
    let hits = memoir.search(
        &SearchRequest {
            query: "playwright".into(),
            limit: 5,
            sort: Sort::Relevance,
            ..SearchRequest::default()
        },
        &ReadPoint::head(),
    )?;
    println!(
        "{}",
        serde_json::to_string_pretty(&hits.to_json()).unwrap_or_default()
    );
    assert_eq!(
        hits.hits.first().map(|h| h.key.as_str()),
        Some("preferences.coding.ui")
    );

    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
