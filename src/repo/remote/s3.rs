//! The [`Transport`] over an S3-compatible bucket (AWS S3, R2, MinIO, Ceph, GCS's S3 API):
//! each operation is one or a few HTTP requests, signed with Signature Version 4
//! (`sigv4`) when keys are set, sent through reqwest on a runtime of the bucket's own.
//!
//! Objects are addressed path-style (`<endpoint>/<bucket>/<key>`), which every such service
//! accepts. A request that fails to connect, times out, or is answered 429 or 5xx is retried
//! up to three times with growing pauses, within 20 seconds. What a bucket answers is not
//! trusted: each body is read only up to the size the caller accepts, and a listing's XML is
//! read for the few fields used, any damage being an error.

use std::future::Future;
use std::ops::Range;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use reqwest::Method;

use super::sigv4::{self, Credentials};
use super::transport::{Entry, Got, Transport, TransportError};
use super::xml;
use crate::calendar::{days_from_civil, SECS_PER_DAY};
use crate::http::chain;

/// Where an S3 remote is and how to sign requests to it. The face fills it from the
/// variables and files S3 users already have (`AWS_ACCESS_KEY_ID`, profiles, ...); it is
/// never stored in the store.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct S3Settings {
    /// Access key id (none: requests are unsigned).
    pub access_key_id: Option<String>,
    /// Secret access key.
    pub secret_access_key: Option<String>,
    /// Session token of temporary credentials.
    pub session_token: Option<String>,
    /// Region (default `us-east-1`).
    pub region: Option<String>,
    /// Endpoint URL of a non-AWS service (`http://127.0.0.1:9000`); plain `http` is allowed
    /// only for loopback hosts or when [`S3Settings::allow_http`] is set.
    pub endpoint: Option<String>,
    /// Allow plain `http` endpoints on any host.
    pub allow_http: bool,
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("access_key_id", &self.access_key_id)
            .field(
                "secret_access_key",
                &self.secret_access_key.as_ref().map(|_| "…"),
            )
            .field("session_token", &self.session_token.as_ref().map(|_| "…"))
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("allow_http", &self.allow_http)
            .finish()
    }
}

/// Retries after the first attempt of a request.
const RETRIES: u32 = 3;
/// No retry starts this long after the first attempt did.
const RETRY_WINDOW: Duration = Duration::from_secs(20);
/// The most read of an error's or a listing page's body.
const MAX_ERROR_BYTES: u64 = 64 << 10;
const MAX_PAGE_BYTES: u64 = 16 << 20;
/// The most objects a listing returns: far more than any remote holds (a pack is up to
/// 32 MiB), and a bound on what a hostile bucket can make a listing hold.
const MAX_LISTED: usize = 1_000_000;
/// Byte ranges requested at once.
const RANGES_IN_FLIGHT: usize = 8;

/// A remote in an S3-compatible bucket.
pub struct S3Bucket {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    /// `scheme://host[:port]` of the endpoint.
    origin: String,
    /// The `Host` header: `host[:port]`.
    host: String,
    /// The bucket's path on the endpoint, encoded (`/bucket`, or `/base/bucket`).
    bucket_path: String,
    /// The remote's key prefix (no leading or trailing `/`; may be empty).
    prefix: String,
    region: String,
    creds: Option<Credentials>,
    url: String,
}

/// One request to the storage: the method, the encoded path, the query (raw), headers
/// besides the signature's, the body, and the most of a 2xx answer's body to read.
struct Ask<'a> {
    method: Method,
    path: &'a str,
    query: &'a [(String, String)],
    headers: &'a [(&'static str, String)],
    body: Bytes,
    limit: u64,
}

impl<'a> Ask<'a> {
    /// A request with no query, no extra header and no body.
    fn plain(method: Method, path: &'a str, limit: u64) -> Ask<'a> {
        Ask {
            method,
            path,
            query: &[],
            headers: &[],
            body: Bytes::new(),
            limit,
        }
    }
}

/// What the storage answered to one request.
struct Reply {
    status: u16,
    /// The body, read up to the limit asked.
    body: Vec<u8>,
    /// The body's size when it is over the limit (then `body` is incomplete).
    too_large: Option<u64>,
}

fn setup_error(url: &str, message: String) -> TransportError {
    TransportError {
        op: "open",
        name: String::new(),
        remote: url.to_string(),
        message,
    }
}

impl S3Bucket {
    /// A remote in `bucket` under `prefix` (no leading or trailing `/`; may be empty).
    pub fn open(bucket: &str, prefix: &str, s: &S3Settings) -> Result<S3Bucket, TransportError> {
        let url = if prefix.is_empty() {
            format!("s3://{bucket}")
        } else {
            format!("s3://{bucket}/{prefix}")
        };
        let region = s.region.clone().unwrap_or_else(|| "us-east-1".into());
        let endpoint = match &s.endpoint {
            Some(e) => {
                let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                    .iter()
                    .any(|p| e.starts_with(p));
                if e.starts_with("http://") && !(loopback || s.allow_http) {
                    return Err(setup_error(
                        &url,
                        format!(
                            "endpoint {e} is plain http; use https, or set AWS_ALLOW_HTTP=true"
                        ),
                    ));
                }
                e.trim_end_matches('/').to_string()
            }
            None => format!("https://s3.{region}.amazonaws.com"),
        };
        let parsed = reqwest::Url::parse(&endpoint)
            .map_err(|e| setup_error(&url, format!("endpoint {endpoint} is not a URL: {e}")))?;
        let host = match (parsed.scheme(), parsed.host_str()) {
            ("http" | "https", Some(h)) => match parsed.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            },
            _ => {
                return Err(setup_error(
                    &url,
                    format!("endpoint {endpoint} is not an http or https URL with a host"),
                ))
            }
        };
        let creds = match (&s.access_key_id, &s.secret_access_key) {
            (Some(k), Some(secret)) => Some(Credentials {
                key_id: k.clone(),
                secret: secret.clone(),
                token: s.session_token.clone(),
            }),
            (None, None) => None,
            _ => {
                return Err(setup_error(
                    &url,
                    "an access key id needs its secret access key (and the other way round)".into(),
                ))
            }
        };
        let (runtime, client) =
            crate::http::client(Duration::from_secs(300), Duration::from_secs(10))
                .map_err(|e| setup_error(&url, e))?;
        Ok(S3Bucket {
            client,
            runtime,
            origin: format!("{}://{host}", parsed.scheme()),
            host,
            bucket_path: format!(
                "{}/{}",
                parsed.path().trim_end_matches('/'),
                sigv4::encode(bucket, false)
            ),
            prefix: prefix.to_string(),
            region,
            creds,
            url,
        })
    }

    /// The full key of `name` under the remote's prefix.
    fn key(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    /// The encoded path of the object `name`.
    fn object_path(&self, name: &str) -> String {
        format!(
            "{}/{}",
            self.bucket_path,
            sigv4::encode(&self.key(name), true)
        )
    }

    /// Runs `f` to completion on this remote's runtime (from a thread of its own when the
    /// caller is itself inside an async runtime, where blocking in place is not allowed).
    fn run<F: Future + Send>(&self, f: F) -> F::Output
    where
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| self.runtime.block_on(f))
                    .join()
                    .expect("the remote I/O thread does not panic")
            })
        } else {
            self.runtime.block_on(f)
        }
    }

    fn error(&self, op: &'static str, name: &str, message: String) -> TransportError {
        TransportError {
            op,
            name: name.to_string(),
            remote: self.url.clone(),
            message,
        }
    }

    /// Sends one request (retrying as the module says) and reads its answer: a 2xx body up
    /// to `limit` bytes, any other up to [`MAX_ERROR_BYTES`].
    async fn exchange(&self, ask: &Ask<'_>) -> Result<Reply, String> {
        let Ask {
            method,
            path,
            query,
            headers,
            body,
            limit,
        } = ask;
        let payload = sigv4::sha256_hex(body);
        let query_string = sigv4::canonical_query(query);
        let target = if query_string.is_empty() {
            format!("{}{path}", self.origin)
        } else {
            format!("{}{path}?{query_string}", self.origin)
        };
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            let date = sigv4::amz_date(now);
            let mut signed: Vec<(&str, String)> = headers.to_vec();
            signed.push(("x-amz-content-sha256", payload.clone()));
            signed.push(("x-amz-date", date.clone()));
            if let Some(token) = self.creds.as_ref().and_then(|c| c.token.clone()) {
                signed.push(("x-amz-security-token", token));
            }
            let mut req = self.client.request(method.clone(), &target);
            for (k, v) in &signed {
                req = req.header(*k, v);
            }
            if let Some(creds) = &self.creds {
                let auth = sigv4::authorization(
                    creds,
                    &self.region,
                    "s3",
                    &sigv4::Request {
                        method: method.as_str(),
                        host: &self.host,
                        path,
                        query,
                        headers: &signed,
                        payload_sha256: &payload,
                        amz_date: &date,
                    },
                );
                req = req.header("authorization", auth);
            }
            let retry = attempt < RETRIES && started.elapsed() < RETRY_WINDOW;
            match req.body(body.clone()).send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if !(retry && (status == 429 || status >= 500)) {
                        return read(resp, *limit).await;
                    }
                }
                Err(e) if retry && (e.is_connect() || e.is_timeout() || e.is_request()) => {}
                Err(e) => return Err(chain(&e)),
            }
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            attempt += 1;
        }
    }

    /// [`Self::exchange`] on the runtime, with errors naming `op` and `name`.
    fn call(&self, op: &'static str, name: &str, ask: Ask<'_>) -> Result<Reply, TransportError> {
        self.run(self.exchange(&ask))
            .map_err(|m| self.error(op, name, m))
    }

    /// Bytes `range` of the object at `path`.
    async fn range(&self, path: &str, range: Range<u64>) -> Result<Vec<u8>, String> {
        if range.start >= range.end {
            return Ok(Vec::new());
        }
        let header = [("range", format!("bytes={}-{}", range.start, range.end - 1))];
        let r = self
            .exchange(&Ask {
                headers: &header,
                ..Ask::plain(Method::GET, path, range.end)
            })
            .await?;
        match r.status {
            // The range alone (its length is checked by the caller).
            206 => Ok(r.body),
            200 => Err("the storage ignored the byte range and sent the whole object".into()),
            _ => Err(failure(&r)),
        }
    }
}

/// Reads `resp`'s body: up to `limit` bytes when it succeeded, else up to
/// [`MAX_ERROR_BYTES`] (for the message).
async fn read(mut resp: reqwest::Response, limit: u64) -> Result<Reply, String> {
    let status = resp.status().as_u16();
    let limit = if resp.status().is_success() {
        limit
    } else {
        MAX_ERROR_BYTES
    };
    if let Some(len) = resp.content_length().filter(|&n| n > limit) {
        return Ok(Reply {
            status,
            body: Vec::new(),
            too_large: Some(len),
        });
    }
    // Sized as the storage says (at most the limit), so a large pack is not copied as it grows.
    let mut body = Vec::with_capacity(resp.content_length().unwrap_or(0) as usize);
    while let Some(chunk) = resp.chunk().await.map_err(|e| chain(&e))? {
        let len = (body.len() + chunk.len()) as u64;
        if len > limit {
            return Ok(Reply {
                status,
                body,
                too_large: Some(len),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Reply {
        status,
        body,
        too_large: None,
    })
}

/// The message of an unsuccessful answer: its status, and the error code and message of its
/// XML body when it has them.
fn failure(r: &Reply) -> String {
    let text = String::from_utf8_lossy(&r.body);
    let code = xml::first(&text, "Code");
    let message = xml::first(&text, "Message");
    match (code, message) {
        (Some(c), Some(m)) => format!("HTTP {}: {c}: {m}", r.status),
        (Some(c), None) => format!("HTTP {}: {c}", r.status),
        _ => format!("HTTP {}", r.status),
    }
}

/// Whether `r` says the object is not there (rather than the bucket).
fn no_such_key(r: &Reply) -> bool {
    r.status == 404
        && xml::first(&String::from_utf8_lossy(&r.body), "Code").as_deref() != Some("NoSuchBucket")
}

fn success(r: &Reply) -> bool {
    (200..300).contains(&r.status)
}

/// Unix seconds of a listing's `LastModified` (`2026-11-29T23:00:00.000Z`).
fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32) * SECS_PER_DAY + h * 3600 + min * 60 + sec)
}

impl Transport for S3Bucket {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn get(&self, name: &str, limit: u64) -> Result<Got, TransportError> {
        let path = self.object_path(name);
        let r = self.call("get", name, Ask::plain(Method::GET, &path, limit))?;
        match r.too_large {
            _ if no_such_key(&r) => Ok(Got::Missing),
            Some(n) if success(&r) => Ok(Got::TooLarge(n)),
            None if success(&r) => Ok(Got::Bytes(r.body)),
            _ => Err(self.error("get", name, failure(&r))),
        }
    }

    fn get_ranges(
        &self,
        name: &str,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Vec<u8>>, TransportError> {
        let path = self.object_path(name);
        let path = &path;
        let all = async {
            futures_util::stream::iter(ranges.iter().cloned())
                .map(|r| self.range(path, r))
                .buffered(RANGES_IN_FLIGHT)
                .try_collect::<Vec<_>>()
                .await
        };
        self.run(all).map_err(|m| self.error("get", name, m))
    }

    fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), TransportError> {
        let path = self.object_path(name);
        let r = self.call(
            "put",
            name,
            Ask {
                body: bytes.into(),
                ..Ask::plain(Method::PUT, &path, 0)
            },
        )?;
        if success(&r) {
            Ok(())
        } else {
            Err(self.error("put", name, failure(&r)))
        }
    }

    fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool, TransportError> {
        let path = self.object_path(name);
        let cond = [("if-none-match", "*".to_string())];
        let r = self.call(
            "put",
            name,
            Ask {
                headers: &cond,
                body: bytes.into(),
                ..Ask::plain(Method::PUT, &path, 0)
            },
        )?;
        match r.status {
            _ if success(&r) => Ok(true),
            // Precondition failed, or a concurrent write of the same name won.
            412 | 409 => Ok(false),
            _ => Err(self.error("put", name, failure(&r))),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, TransportError> {
        let strip = if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        };
        let path = self.bucket_path.clone();
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = vec![
                ("list-type".to_string(), "2".to_string()),
                ("prefix".to_string(), self.key(prefix)),
            ];
            if let Some(t) = &token {
                query.push(("continuation-token".to_string(), t.clone()));
            }
            let r = self.call(
                "list",
                prefix,
                Ask {
                    query: &query,
                    ..Ask::plain(Method::GET, &path, MAX_PAGE_BYTES)
                },
            )?;
            if !success(&r) || r.too_large.is_some() {
                let why = match r.too_large {
                    Some(n) if success(&r) => format!("a listing page of {n} bytes"),
                    _ => failure(&r),
                };
                return Err(self.error("list", prefix, why));
            }
            let bad = |why: &str| self.error("list", prefix, format!("malformed listing: {why}"));
            let text = std::str::from_utf8(&r.body).map_err(|_| bad("not UTF-8"))?;
            for item in xml::all(text, "Contents") {
                let key = xml::first(item, "Key").ok_or_else(|| bad("an entry without a key"))?;
                let size = xml::first(item, "Size")
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or_else(|| bad("an entry without a size"))?;
                let modified = xml::first(item, "LastModified")
                    .and_then(|t| parse_time(&t))
                    .ok_or_else(|| bad("an entry without a time"))?;
                if out.len() == MAX_LISTED {
                    return Err(bad("more than a million objects"));
                }
                out.push(Entry {
                    name: key.strip_prefix(&strip).unwrap_or(&key).to_string(),
                    size,
                    modified,
                });
            }
            if xml::first(text, "IsTruncated").as_deref() != Some("true") {
                break;
            }
            match xml::first(text, "NextContinuationToken") {
                Some(t) if Some(&t) != token.as_ref() => token = Some(t),
                _ => return Err(bad("a truncated page without a new continuation token")),
            }
        }
        out.retain(|e| e.name.starts_with(prefix));
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> Result<(), TransportError> {
        let path = self.object_path(name);
        let r = self.call("delete", name, Ask::plain(Method::DELETE, &path, 0))?;
        if success(&r) || no_such_key(&r) {
            Ok(())
        } else {
            Err(self.error("delete", name, failure(&r)))
        }
    }
}

#[cfg(test)]
#[path = "s3_scripted_tests.rs"]
mod scripted_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_times_are_read_to_the_second() {
        assert_eq!(parse_time("2013-05-24T00:00:00.000Z"), Some(1_369_353_600));
        assert_eq!(parse_time("2015-08-30T12:36:00Z"), Some(1_440_938_160));
        assert_eq!(parse_time("2015-13-30T12:36:00Z"), None);
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("2015-08-30T12:3é:00Z"), None);
    }

    #[test]
    fn plain_http_is_refused_off_loopback() {
        let s = S3Settings {
            endpoint: Some("http://example.com:9000".into()),
            ..S3Settings::default()
        };
        let e = S3Bucket::open("b", "", &s).err().expect("refused");
        assert!(e.message.contains("plain http"), "{e}");
        let s = S3Settings {
            endpoint: Some("ftp://127.0.0.1".into()),
            ..S3Settings::default()
        };
        assert!(S3Bucket::open("b", "", &s).is_err());
        let s = S3Settings {
            access_key_id: Some("k".into()),
            ..S3Settings::default()
        };
        assert!(S3Bucket::open("b", "", &s).is_err());
    }

    #[test]
    fn objects_are_addressed_path_style_under_the_prefix() {
        let s = S3Settings {
            endpoint: Some("http://127.0.0.1:9000/base/".into()),
            ..S3Settings::default()
        };
        let b = S3Bucket::open("bucket", "team a", &s).expect("opens");
        assert_eq!(b.origin, "http://127.0.0.1:9000");
        assert_eq!(b.host, "127.0.0.1:9000");
        assert_eq!(
            b.object_path("refs/main/1"),
            "/base/bucket/team%20a/refs/main/1"
        );
        let aws = S3Bucket::open("b", "", &S3Settings::default()).expect("opens");
        assert_eq!(aws.origin, "https://s3.us-east-1.amazonaws.com");
        assert_eq!(aws.object_path("packs/x.pack"), "/b/packs/x.pack");
    }
}
