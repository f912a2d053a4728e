use super::*;

#[test]
fn the_builtin_taxonomy_reads_and_round_trips() {
    let t = Taxonomy::builtin();
    assert_eq!(t.name, "general");
    let ids: Vec<&str> = t.categories.iter().map(|c| c.id.as_str()).collect();
    for want in [
        "behavior",
        "context",
        "debugging",
        "entity",
        "experience",
        "knowledge",
        "preferences",
        "profile",
        "project",
        "settings",
        "workflow",
    ] {
        assert!(ids.contains(&want), "{want} missing from {ids:?}");
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    for c in &t.categories {
        assert!(!c.description.is_empty() && !c.topics.is_empty() && !c.examples.is_empty());
    }
    assert_eq!(Taxonomy::parse(&t.to_markdown()).unwrap(), t);
    let records = t.records();
    assert_eq!(records[0].0, META_PATH);
    assert_eq!(records.len(), t.categories.len() + 1);
    let back = Taxonomy::from_records(&records[0].1, &records[1..]).unwrap();
    assert_eq!(back, t);
}

#[test]
fn the_snippet_names_every_category() {
    let t = Taxonomy::builtin();
    let s = t.snippet();
    assert!(s.starts_with("Taxonomy \"general\""), "{s}");
    for c in &t.categories {
        assert!(
            s.contains(&format!("\n- {}: {}", c.id, c.description)),
            "{s}"
        );
    }
    assert!(s.contains("Example: debugging.errors.store_busy = "));
    assert!(s.len() < 6000, "{} bytes", s.len());
}

fn refused(doc: &str) -> String {
    match Taxonomy::parse(doc) {
        Err(MemoryError::Taxonomy(m)) => m,
        other => panic!("{doc:?} gave {other:?}"),
    }
}

#[test]
fn documents_follow_the_format() {
    let ok = "---\nname: mine\n---\n# Title\nintro text\n\n## b_cat\nSecond.\n\n## a-cat\nFirst\nline two.\nTopics:\n- t1: one\n* t2: two\nExamples:\n- a-cat.t1.x: an example: with a colon\n";
    let t = Taxonomy::parse(ok).unwrap();
    assert_eq!((t.name.as_str(), t.description.as_str()), ("mine", ""));
    assert_eq!(t.categories[0].id, "a-cat");
    assert_eq!(t.categories[0].description, "First line two.");
    assert_eq!(t.categories[0].topics.len(), 2);
    assert_eq!(t.categories[0].examples[0].text, "an example: with a colon");
    assert_eq!(t.categories[1].id, "b_cat");
    let quoted = Taxonomy::parse("---\nname: 'q'\ndescription: \"d: e\"\n---\n## a\nx\n").unwrap();
    assert_eq!(
        (quoted.name.as_str(), quoted.description.as_str()),
        ("q", "d: e")
    );

    for (doc, why) in [
        ("## a\nx\n", "starts with front matter"),
        ("---\nname: x\n## a\nx\n", "front matter lines"),
        ("---\nname: x\n", "no closing"),
        ("---\ndescription: d\n---\n## a\nx\n", "no 'name'"),
        (
            "---\nname: x\ncolour: red\n---\n## a\nx\n",
            "unknown front matter key",
        ),
        ("---\nname: Big Name\n---\n## a\nx\n", "name"),
        ("---\nname: x\n---\nno categories\n", "no category"),
        ("---\nname: x\n---\n## Bad.Id\nx\n", "line 4: category id"),
        ("---\nname: x\n---\n## a\nx\n## a\ny\n", "appears twice"),
        ("---\nname: x\n---\n## a\n", "has no description"),
        ("---\nname: x\n---\n## a\n- item\n", "before 'Topics:'"),
        (
            "---\nname: x\n---\n## a\nd\nTopics:\nprose\n",
            "every line is a list item",
        ),
        (
            "---\nname: x\n---\n## a\nd\nTopics:\n- Bad Topic: x\n",
            "not a plain segment",
        ),
        (
            "---\nname: x\n---\n## a\nd\nTopics:\n- t\n",
            "'- name: text'",
        ),
        (
            "---\nname: x\n---\n## a\nd\nExamples:\n- a.b: x\n",
            "three plain segments",
        ),
        (
            "---\nname: x\n---\n## a\nd\nExamples:\n- b.c.d: x\n",
            "not in category",
        ),
        (
            "---\nname: x\n---\n## a\nd\n### sub\n",
            "only '## id' headings",
        ),
    ] {
        let m = refused(doc);
        assert!(m.contains(why), "{doc:?}: {m}");
    }
    let long = format!(
        "---\nname: x\n---\n## a\n{}\n",
        "w".repeat(MAX_TEXT_CHARS + 1)
    );
    assert!(refused(&long).contains("longer than"));
    let many: String = (0..=MAX_CATEGORIES)
        .map(|i| format!("## c{i}\nd\n"))
        .collect();
    assert!(refused(&format!("---\nname: x\n---\n{many}")).contains("more than"));
    let huge = "x".repeat(MAX_DOCUMENT_BYTES + 1);
    assert!(refused(&huge).contains("longer than"));
}

#[test]
fn stored_records_are_checked() {
    let e = Taxonomy::from_records("name: x", &[("Bad".into(), "d\n".into())]).unwrap_err();
    assert!(e.to_string().contains("not a category id"), "{e}");
    let e = Taxonomy::from_records("name: x", &[("a".into(), "d\n## b\ne\n".into())]).unwrap_err();
    assert!(e.to_string().contains("damaged"), "{e}");
    let e = Taxonomy::from_records("nonsense", &[("a".into(), "d\n".into())]).unwrap_err();
    assert!(e.to_string().contains("damaged"), "{e}");
}
