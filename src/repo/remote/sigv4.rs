//! AWS Signature Version 4, as S3 and the services that copy its API check it: a request's
//! method, path, query, chosen headers and payload hash are put in canonical form, hashed,
//! and signed with a key derived from the secret, the day, the region and the service.
//! Tested against the examples AWS publishes.

use ring::{digest, hmac};

use crate::calendar::{civil_from_days, SECS_PER_DAY};

/// A key pair (and, for temporary credentials, its session token).
#[derive(Clone)]
pub(super) struct Credentials {
    pub key_id: String,
    pub secret: String,
    pub token: Option<String>,
}

/// What is signed of one request. `path` and the query are given as sent: the path already
/// encoded with [`encode`] (keeping its slashes), the query's names and values raw.
pub(super) struct Request<'a> {
    pub method: &'a str,
    /// `host` or `host:port`, as the `Host` header sends it.
    pub host: &'a str,
    pub path: &'a str,
    pub query: &'a [(String, String)],
    /// Headers signed besides `host`, names in lower case.
    pub headers: &'a [(&'a str, String)],
    /// Hex SHA-256 of the body (also sent as `x-amz-content-sha256`).
    pub payload_sha256: &'a str,
    /// The time of signing, `YYYYMMDDTHHMMSSZ` (also sent as `x-amz-date`).
    pub amz_date: &'a str,
}

/// Percent-encodes `s` as SigV4 asks: every byte but `A-Z a-z 0-9 - . _ ~` as `%XY` in
/// upper case, and `/` too unless `keep_slash`.
pub(super) fn encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The query string of `query`, encoded and sorted as it is signed (and so also sent).
pub(super) fn canonical_query(query: &[(String, String)]) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (encode(k, false), encode(v, false)))
        .collect();
    pairs.sort();
    let parts: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join("&")
}

/// Lower-case hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex SHA-256 of `bytes`.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, bytes).as_ref())
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
        .as_ref()
        .to_vec()
}

/// `x-amz-date` of a Unix time.
pub(super) fn amz_date(unix_seconds: i64) -> String {
    let (y, m, d) = civil_from_days(unix_seconds.div_euclid(SECS_PER_DAY));
    let s = unix_seconds.rem_euclid(SECS_PER_DAY);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The `Authorization` header of `req`, signed with `creds` for `region` and `service`.
pub(super) fn authorization(
    creds: &Credentials,
    region: &str,
    service: &str,
    req: &Request<'_>,
) -> String {
    let mut headers: Vec<(String, String)> = vec![("host".into(), req.host.to_string())];
    headers.extend(
        req.headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_string())),
    );
    headers.sort();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let mut canonical = format!(
        "{}\n{}\n{}\n",
        req.method,
        req.path,
        canonical_query(req.query)
    );
    for (k, v) in &headers {
        canonical.push_str(&format!("{k}:{v}\n"));
    }
    canonical.push_str(&format!("\n{signed}\n{}", req.payload_sha256));

    let day = req.amz_date.get(..8).unwrap_or_default();
    let scope = format!("{day}/{region}/{service}/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        req.amz_date,
        sha256_hex(canonical.as_bytes())
    );
    let mut key = hmac(format!("AWS4{}", creds.secret).as_bytes(), day);
    for part in [region, service, "aws4_request"] {
        key = hmac(&key, part);
    }
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope},SignedHeaders={signed},Signature={}",
        creds.key_id,
        hex(&hmac(&key, &to_sign))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn signs_the_published_s3_get_example() {
        // AWS's S3 documentation, "Signature Calculations for the Authorization Header:
        // Transferring Payload in a Single Chunk", example GET Object.
        let creds = Credentials {
            key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            token: None,
        };
        let req = Request {
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            query: &[],
            headers: &[
                ("range", "bytes=0-9".into()),
                ("x-amz-content-sha256", EMPTY.into()),
                ("x-amz-date", "20130524T000000Z".into()),
            ],
            payload_sha256: EMPTY,
            amz_date: "20130524T000000Z",
        };
        assert_eq!(
            authorization(&creds, "us-east-1", "s3", &req),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,\
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,\
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn signs_the_test_suite_query_order_example() {
        // AWS's Signature Version 4 test suite, get-vanilla-query-order-key-case: the query
        // is signed sorted, whatever order it was given in.
        let creds = Credentials {
            key_id: "AKIDEXAMPLE".into(),
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            token: None,
        };
        let query = [
            ("Param2".to_string(), "value2".to_string()),
            ("Param1".to_string(), "value1".to_string()),
        ];
        let req = Request {
            method: "GET",
            host: "example.amazonaws.com",
            path: "/",
            query: &query,
            headers: &[("x-amz-date", "20150830T123600Z".into())],
            payload_sha256: EMPTY,
            amz_date: "20150830T123600Z",
        };
        let auth = authorization(&creds, "us-east-1", "service", &req);
        assert!(
            auth.ends_with(
                "SignedHeaders=host;x-amz-date,\
                 Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
            ),
            "{auth}"
        );
        assert_eq!(canonical_query(&query), "Param1=value1&Param2=value2");
    }

    #[test]
    fn encodes_as_sigv4_asks() {
        assert_eq!(encode("a b/c~d+e", true), "a%20b/c~d%2Be");
        assert_eq!(encode("a/b", false), "a%2Fb");
        assert_eq!(encode("é", false), "%C3%A9");
    }

    #[test]
    fn dates_are_utc_basic_format() {
        assert_eq!(amz_date(0), "19700101T000000Z");
        assert_eq!(amz_date(1_369_353_600), "20130524T000000Z");
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
    }
}
