//! Remotes through the real binary: against a real S3-compatible server (moto's
//! `moto_server` from the project's virtual environment, on 127.0.0.1) and a directory.

mod delta;
mod faults;
#[cfg(unix)]
mod hostile;
mod inputs;
mod scenarios;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{files_below, memoir, start_server, venv_program, Out, Server};

/// A running `moto_server`, killed when dropped.
pub struct Moto {
    _server: Server,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

/// One plain HTTP/1.1 request to 127.0.0.1:`port`; the status code (none: no answer).
fn http(port: u16, method: &str, path: &str) -> Option<u16> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    answer.split(' ').nth(1)?.parse().ok()
}

impl Moto {
    /// Starts the server and creates `bucket`; `None` when the test skips for want of moto.
    /// A server that does not start fails the test.
    pub fn start(bucket: &str) -> Option<Moto> {
        let program = venv_program("moto_server")?;
        let args = |port: u16, _: &Path| -> Vec<String> {
            vec![
                "-H".into(),
                "127.0.0.1".into(),
                "-p".into(),
                port.to_string(),
            ]
        };
        let server = start_server(&program, &args, &|port| http(port, "GET", "/").is_some());
        let status = http(server.port, "PUT", &format!("/{bucket}"));
        assert_eq!(status, Some(200), "creating bucket {bucket}");
        Some(Moto {
            endpoint: format!("http://127.0.0.1:{}", server.port),
            _server: server,
        })
    }

    /// The environment that points memoir at this server, with dummy keys.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID".into(), "testing".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "testing-secret".into()),
            ("AWS_REGION".into(), "us-east-1".into()),
            ("AWS_ENDPOINT_URL".into(), self.endpoint.clone()),
        ]
    }

    /// An object_store client on `bucket` of this server (tests read and damage the remote
    /// through it).
    pub fn client(&self, bucket: &str) -> object_store::aws::AmazonS3 {
        let _ = rustls::crypto::ring::default_provider().install_default();
        object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_access_key_id("testing")
            .with_secret_access_key("testing-secret")
            .build()
            .unwrap()
    }
}

/// Where the scenarios' remote lives: a bucket on a moto server, or a directory.
pub enum Place {
    S3 { moto: Moto, bucket: String },
    Dir(PathBuf),
}

impl Place {
    /// A bucket on a new server (`None` when the test skips for want of moto).
    pub fn s3(bucket: &str) -> Option<Place> {
        Some(Place::S3 {
            moto: Moto::start(bucket)?,
            bucket: bucket.to_string(),
        })
    }

    /// The remote's URL.
    pub fn url(&self) -> String {
        match self {
            Place::S3 { bucket, .. } => format!("s3://{bucket}/team/memory"),
            Place::Dir(d) => d.display().to_string(),
        }
    }

    /// The environment memoir needs to reach it.
    pub fn env(&self) -> Vec<(String, String)> {
        match self {
            Place::S3 { moto, .. } => moto.env(),
            Place::Dir(_) => Vec::new(),
        }
    }

    /// Every object of the remote: name (relative to the remote's root) and bytes.
    pub fn objects(&self) -> Vec<(String, Vec<u8>)> {
        match self {
            Place::Dir(d) => files_below(d)
                .into_iter()
                .map(|f| {
                    let name = f.strip_prefix(d).unwrap().display().to_string();
                    (name, std::fs::read(&f).unwrap())
                })
                .collect(),
            Place::S3 { moto, bucket } => {
                use futures_util::StreamExt;
                use object_store::{ObjectStore, ObjectStoreExt};
                let client = moto.client(bucket);
                let rt = runtime();
                rt.block_on(async {
                    let prefix = object_store::path::Path::from("team/memory");
                    let mut names = Vec::new();
                    let mut s = client.list(Some(&prefix));
                    while let Some(m) = s.next().await {
                        names.push(m.unwrap().location);
                    }
                    let mut out = Vec::new();
                    for n in names {
                        let bytes = client.get(&n).await.unwrap().bytes().await.unwrap();
                        let rel = n.to_string()["team/memory/".len()..].to_string();
                        out.push((rel, bytes.to_vec()));
                    }
                    out.sort();
                    out
                })
            }
        }
    }

    /// Replaces the object `name` of the remote with `bytes`.
    pub fn overwrite(&self, name: &str, bytes: Vec<u8>) {
        match self {
            Place::Dir(d) => std::fs::write(d.join(name), bytes).unwrap(),
            Place::S3 { moto, bucket } => {
                use object_store::ObjectStoreExt;
                let client = moto.client(bucket);
                let rt = runtime();
                let path = object_store::path::Path::from(format!("team/memory/{name}"));
                rt.block_on(client.put(&path, bytes.into())).unwrap();
            }
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs memoir with `env` on `store` (`--json`): the finished run.
pub fn run(store: &Path, env: &[(String, String)], args: &[&str]) -> Out {
    let mut c = memoir();
    c.arg("-s").arg(store).arg("--json").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run memoir").into()
}

/// As [`run`], asserting exit `code`; the JSON printed.
pub fn ok(store: &Path, env: &[(String, String)], args: &[&str], code: i32) -> Value {
    let o = run(store, env, args);
    assert_eq!(
        o.code, code,
        "memoir {args:?}: stdout {} stderr {}",
        o.stdout, o.stderr
    );
    o.json()
}

/// Stores `content` at `key` in `store`.
pub fn remember(store: &Path, key: &str, content: &str) {
    ok(store, &[], &["remember", "-p", key, content], 0);
}

/// The content of `key` in `store` (`None`: exit 2, not found).
pub fn content(store: &Path, key: &str) -> Option<String> {
    let o = run(store, &[], &["get", key]);
    match o.code {
        0 => Some(
            o.json()["items"][0]["value"]["content"]
                .as_str()
                .unwrap()
                .to_string(),
        ),
        2 => None,
        c => panic!("get {key}: exit {c}: {}", o.stderr),
    }
}
