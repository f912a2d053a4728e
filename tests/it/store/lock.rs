//! The lock.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memoir::store::{ObjectStore, Store, StoreError};

use super::{new_sled_store, opts, REOPEN_MS};

/// Environment variable that turns `lock_holder_child` into a lock holder for that path.
const HOLD_ENV: &str = "MEMOIR_TEST_HOLD_LOCK";

#[test]
fn second_open_in_process_is_busy_until_last_clone_drops() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();

    // The store returned by `create` holds the lock.
    match Store::open(&path, &opts(0)) {
        Err(StoreError::Busy { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected Busy, got {other:?}"),
    }
    let start = Instant::now();
    match Store::open(&path, &opts(100)) {
        Err(StoreError::Busy { waited_ms, .. }) => assert!(waited_ms >= 100, "{waited_ms}"),
        other => panic!("expected Busy, got {other:?}"),
    }
    assert!(start.elapsed() >= Duration::from_millis(100));

    // A clone keeps the lock; the last drop releases it.
    let clone = s.clone();
    drop(s);
    assert!(matches!(
        Store::open(&path, &opts(0)),
        Err(StoreError::Busy { .. })
    ));
    drop(clone);
    let reopened = Store::open(&path, &opts(REOPEN_MS)).unwrap();
    assert!(matches!(
        Store::open(&path, &opts(0)),
        Err(StoreError::Busy { .. })
    ));
    drop(reopened);
}

#[test]
fn waiting_opener_gets_the_lock_when_released() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    let waiter = std::thread::spawn(move || Store::open(&path, &opts(5_000)).map(|_| ()));
    std::thread::sleep(Duration::from_millis(100));
    drop(s);
    waiter.join().unwrap().unwrap();
}

/// Not a test by itself: the lock holder that `busy_across_processes` starts in a child
/// process. Without the environment variable it does nothing.
#[test]
#[ignore = "helper process for busy_across_processes"]
fn lock_holder_child() {
    let Some(path) = std::env::var_os(HOLD_ENV) else {
        return;
    };
    let store = Store::open(Path::new(&path), &opts(5_000)).unwrap();
    store.put(&[7; 32], b"from the child").unwrap();
    store.flush().unwrap();
    // Hold until stdin closes or 3 s pass.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        let _ = tx.send(());
    });
    println!("\nlocked");
    let _ = rx.recv_timeout(Duration::from_secs(3));
    drop(store);
}

#[test]
fn busy_across_processes() {
    let (_d, s) = new_sled_store();
    let path = s.path().unwrap().to_path_buf();
    drop(s);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::lock::lock_holder_child",
            "--ignored",
            "--nocapture",
        ])
        .env(HOLD_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.trim() == "locked" => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lock holder never reported `locked`: {e}");
            }
        }
    }

    let start = Instant::now();
    let result = Store::open(&path, &opts(200));
    let took = start.elapsed();
    let busy = matches!(&result, Err(StoreError::Busy { path: p, waited_ms }) if p == &path && *waited_ms >= 200);
    drop(result);
    if !busy || took < Duration::from_millis(200) || took >= Duration::from_secs(2) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("expected Busy after 200..2000 ms, busy={busy}, took {took:?}");
    }

    // A killed holder never blocks anyone: the OS drops its lock with the process.
    child.kill().unwrap();
    child.wait().unwrap();
    let s = Store::open(&path, &opts(2_000)).unwrap();
    // What the holder flushed before dying is there.
    assert_eq!(
        s.get(&[7; 32]).unwrap().as_deref(),
        Some(&b"from the child"[..])
    );
}
