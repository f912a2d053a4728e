//! The S3 transport against a scripted HTTP peer, for what a real server rarely does on
//! request: failing and recovering, answering more than it said, listing without end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::*;

/// What the scripted server answers to the Nth request (from 0), given its `Range` header.
type Answer = Arc<dyn Fn(usize, Option<&str>) -> String + Send + Sync>;

/// A server on 127.0.0.1 answering each request with the next of `replies` (the last one
/// again when they run out); returns the bucket and the request lines it saw.
fn scripted(replies: Vec<String>) -> (S3Bucket, Arc<Mutex<Vec<String>>>) {
    serve(Arc::new(move |n, _| {
        replies[n.min(replies.len() - 1)].clone()
    }))
}

/// A server on 127.0.0.1 answering each request with `answer`.
fn serve(answer: Answer) -> (S3Bucket, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let next = Arc::new(Mutex::new(0usize));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let (log, next, answer) = (Arc::clone(&log), Arc::clone(&next), Arc::clone(&answer));
            // Each connection on a thread of its own: the client may open several.
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().expect("clone"));
                let mut out = conn;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let mut length = 0usize;
                    let mut range = None;
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                        let lower = h.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if let Some(v) = lower.strip_prefix("range:") {
                            range = Some(v.trim().to_string());
                        }
                    }
                    let mut body = vec![0; length];
                    let _ = reader.read_exact(&mut body);
                    let reply = {
                        let mut n = next.lock().expect("next");
                        log.lock().expect("log").push(line.trim().to_string());
                        *n += 1;
                        answer(*n - 1, range.as_deref())
                    };
                    if out.write_all(reply.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    let settings = S3Settings {
        endpoint: Some(format!("http://127.0.0.1:{port}")),
        ..S3Settings::default()
    };
    (S3Bucket::open("b", "p", &settings).expect("opens"), seen)
}

fn reply(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn a_failing_server_is_retried_then_answers() {
    let (b, seen) = scripted(vec![
        reply("503 Slow Down", "<Error><Code>SlowDown</Code></Error>"),
        reply("500 Internal Server Error", ""),
        reply("200 OK", "hello"),
    ]);
    assert_eq!(b.get("x", 100).expect("get"), Got::Bytes(b"hello".to_vec()));
    let seen = seen.lock().expect("log");
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|l| l == "GET /b/p/x HTTP/1.1"), "{seen:?}");
}

#[test]
fn errors_name_the_code_and_retries_end() {
    let (b, seen) = scripted(vec![reply(
        "503 Service Unavailable",
        "<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>",
    )]);
    let e = b.put("x", b"data".to_vec()).expect_err("fails");
    assert_eq!(e.message, "HTTP 503: SlowDown: Reduce your rate");
    assert_eq!(seen.lock().expect("log").len(), 1 + RETRIES as usize);
}

#[test]
fn bodies_over_the_limit_are_not_read() {
    // Says 1,000,000 bytes: refused on its word.
    let (b, _) = scripted(vec![
        "HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n".into()
    ]);
    assert_eq!(b.get("x", 10).expect("get"), Got::TooLarge(1_000_000));
    // Says nothing and sends more than the limit: cut off.
    let big = "y".repeat(5000);
    let (b, _) = scripted(vec![format!(
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    )]);
    assert!(matches!(b.get("x", 10).expect("get"), Got::TooLarge(n) if n > 10));
}

#[test]
fn missing_objects_and_buckets_differ() {
    let (b, _) = scripted(vec![
        reply("404 Not Found", "<Error><Code>NoSuchKey</Code></Error>"),
        reply("404 Not Found", "<Error><Code>NoSuchBucket</Code></Error>"),
    ]);
    assert_eq!(b.get("x", 10).expect("get"), Got::Missing);
    let e = b.get("x", 10).expect_err("no bucket");
    assert!(e.message.contains("NoSuchBucket"), "{e}");
}

#[test]
fn a_listing_that_never_ends_is_refused() {
    let page = "<ListBucketResult><IsTruncated>true</IsTruncated>\
                <Contents><Key>p/packs/a.pack</Key><Size>3</Size>\
                <LastModified>2026-11-29T23:00:00.000Z</LastModified></Contents>\
                <NextContinuationToken>same</NextContinuationToken></ListBucketResult>";
    let (b, seen) = scripted(vec![reply("200 OK", page)]);
    let e = b.list("packs/").expect_err("refused");
    assert!(e.message.contains("continuation token"), "{e}");
    assert_eq!(seen.lock().expect("log").len(), 2);
    let (b, _) = scripted(vec![reply(
        "200 OK",
        "<ListBucketResult><Contents><Key>p/packs/a</Key></Contents></ListBucketResult>",
    )]);
    assert!(b.list("packs/").is_err(), "an entry without a size");
}

#[test]
fn a_listing_strips_the_prefix_and_pages_on() {
    let first = "<ListBucketResult><IsTruncated>true</IsTruncated>\
                 <Contents><Key>p/packs/b.pack</Key><Size>3</Size>\
                 <LastModified>2026-11-29T23:00:00.000Z</LastModified></Contents>\
                 <NextContinuationToken>t+1</NextContinuationToken></ListBucketResult>";
    let last = "<ListBucketResult><IsTruncated>false</IsTruncated>\
                <Contents><Key>p/packs/a&amp;.pack</Key><Size>4</Size>\
                <LastModified>2026-11-29T23:00:01Z</LastModified></Contents></ListBucketResult>";
    let (b, seen) = scripted(vec![reply("200 OK", first), reply("200 OK", last)]);
    let listed = b.list("packs/").expect("list");
    let names: Vec<&str> = listed.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["packs/a&.pack", "packs/b.pack"]);
    assert_eq!(listed[0].modified, 1_795_993_201);
    let seen = seen.lock().expect("log");
    assert_eq!(
        seen[1],
        "GET /b?continuation-token=t%2B1&list-type=2&prefix=p%2Fpacks%2F HTTP/1.1"
    );
}

#[test]
fn ranges_come_back_in_order_and_must_be_ranges() {
    let object = b"0123456789";
    let (b, seen) = serve(Arc::new(move |_, range| {
        let (from, to) = range
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.split_once('-'))
            .map(|(a, z)| {
                (
                    a.parse::<usize>().expect("from"),
                    z.parse::<usize>().expect("to"),
                )
            })
            .expect("a range request");
        let part = std::str::from_utf8(&object[from..=to]).expect("text");
        reply("206 Partial Content", part)
    }));
    let got = b.get_ranges("x", &[2..4, 7..10, 5..5]).expect("ranges");
    assert_eq!(got, vec![b"23".to_vec(), b"789".to_vec(), vec![]]);
    assert_eq!(
        seen.lock().expect("log").len(),
        2,
        "an empty range is not asked for"
    );
    let (b, _) = scripted(vec![reply("200 OK", "0123456789")]);
    let e = b.get_ranges("x", &[2..4, 5..6]).expect_err("not a range");
    assert!(e.message.contains("ignored the byte range"), "{e}");
}
