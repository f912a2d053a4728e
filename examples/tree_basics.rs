//! The storage foundation in a few steps: create a store, put memories' value ids under
//! taxonomy keys, read them back, count them by prefix, diff two versions, reopen.
//!
//! Run: `cargo run --example tree_basics`

use std::sync::Arc;

use memoir::key::{group_prefix, namespace_prefix, split_encoded, Key};
use memoir::object::{Blob, Objects};
use memoir::prolly::{prefix_range, Edit, KeyRange, NodeStore, DEFAULT_CACHE_NODES};
use memoir::store::{ObjectStore, OpenOptions, RefStore, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("memoir-example-{}", std::process::id()));
    let store = Store::create(&dir, &OpenOptions::default())?;
    let objects = Objects::new(Arc::new(store.clone()) as Arc<dyn ObjectStore>);
    let tree = NodeStore::new(Arc::new(store.clone()), DEFAULT_CACHE_NODES);

    // Values are objects; the tree maps encoded keys to their ids.
    let memories = [
        ("preferences.coding.testing", "Prefers pytest with fixtures"),
        ("preferences.coding.style", "Uses black, 100 columns"),
        ("preferences.tools.editor", "Neovim"),
        ("project.memoir.goal", "Replace the Python memory store"),
    ];
    let mut edits = Vec::new();
    for (path, content) in memories {
        let value = objects.write(&Blob(content.as_bytes().to_vec()))?;
        edits.push(Edit::Put(Key::new("default", path)?.encode(), value));
    }
    let v1 = tree.apply(&tree.empty()?, edits)?;
    println!(
        "v1 root {} holds {} memories",
        v1.short(12),
        tree.count(&v1)?
    );

    // Point read.
    let key = Key::new("default", "preferences.tools.editor")?;
    let id = tree.get(&v1, &key.encode())?.expect("stored above");
    let value: Blob = objects.read(&id)?;
    println!("{key} = {}", String::from_utf8_lossy(&value.0));

    // Depth-2 histogram of one namespace, from subtree counts.
    let ns_range = prefix_range(&namespace_prefix("default"));
    for (group, n) in tree.histogram(&v1, &ns_range, &|k| group_prefix(k, 2))? {
        let (ns, path) = split_encoded(&group);
        println!("  {ns}:{path}  {n}");
    }

    // A second version: one change, one removal. The diff reads only what differs.
    let changed = objects.write(&Blob(b"Helix".to_vec()))?;
    let v2 = tree.apply(
        &v1,
        vec![
            Edit::Put(key.encode(), changed),
            Edit::Delete(Key::new("default", "project.memoir.goal")?.encode()),
        ],
    )?;
    for c in tree.diff_all(&v1, &v2)? {
        let (ns, path) = split_encoded(&c.key);
        let op = match (c.old, c.new) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "modified",
        };
        println!("  {op:8} {ns}:{path}");
    }

    // Name the version with a ref, flush, and read it back after reopening.
    store.flush()?;
    store
        .cas_ref("example", None, Some(v2.to_hex().as_bytes()))
        .map_err(|e| e.to_string())?
        .map_err(|_| "ref changed underneath")?;
    store.flush()?;
    drop((tree, objects, store));
    let store = Store::open(&dir, &OpenOptions::default())?;
    let root: memoir::object::ObjectId =
        String::from_utf8(store.get_ref("example")?.expect("set above"))?.parse()?;
    let tree = NodeStore::new(Arc::new(store.clone()), DEFAULT_CACHE_NODES);
    let all = tree.collect(&root, &KeyRange::all())?;
    println!("after reopen: {} memories at {}", all.len(), root.short(12));
    assert_eq!(all.len(), 3);
    drop((tree, store));
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
