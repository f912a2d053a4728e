//! The [`Transport`] over real object storage, through the `object_store` crate: an
//! S3-compatible bucket (AWS S3, R2, MinIO, Ceph, GCS's S3 API), or a local directory.

use std::future::Future;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjPath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    RetryConfig,
};

use super::transport::{Entry, Got, Transport, TransportError};

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

/// A remote in object storage.
pub struct Bucket {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The directory of a local remote.
    dir: Option<PathBuf>,
    url: String,
    runtime: tokio::runtime::Runtime,
}

/// A failure to reach a remote's storage at all.
fn setup_error(url: &str, message: String) -> TransportError {
    TransportError {
        op: "open",
        name: String::new(),
        remote: url.to_string(),
        message,
    }
}

fn runtime(url: &str) -> Result<tokio::runtime::Runtime, TransportError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| setup_error(url, format!("cannot start the I/O runtime: {e}")))
}

impl Bucket {
    /// A remote in the local directory `dir` (created when `create`).
    pub fn directory(dir: PathBuf, create: bool) -> Result<Bucket, TransportError> {
        let url = format!("file://{}", dir.display());
        if create {
            std::fs::create_dir_all(&dir)
                .map_err(|e| setup_error(&url, format!("cannot create the directory: {e}")))?;
        } else if !dir.is_dir() {
            return Err(setup_error(&url, "no such directory".into()));
        }
        let fs = LocalFileSystem::new_with_prefix(&dir)
            .map_err(|e| setup_error(&url, e.to_string()))?
            .with_automatic_cleanup(true);
        Ok(Bucket {
            store: Arc::new(fs),
            prefix: String::new(),
            dir: Some(dir),
            runtime: runtime(&url)?,
            url,
        })
    }

    /// A remote in `bucket` under `prefix` (no leading or trailing `/`; may be empty).
    pub fn s3(bucket: &str, prefix: &str, s: &S3Settings) -> Result<Bucket, TransportError> {
        let url = if prefix.is_empty() {
            format!("s3://{bucket}")
        } else {
            format!("s3://{bucket}/{prefix}")
        };
        // rustls needs a process-wide crypto provider; a second install is a no-op error.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region(s.region.clone().unwrap_or_else(|| "us-east-1".into()))
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 3,
                retry_timeout: Duration::from_secs(20),
            })
            .with_client_options(
                ClientOptions::new()
                    .with_connect_timeout(Duration::from_secs(10))
                    .with_timeout(Duration::from_secs(300)),
            );
        if let Some(e) = &s.endpoint {
            let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                .iter()
                .any(|p| e.starts_with(p));
            if e.starts_with("http://") && !(loopback || s.allow_http) {
                return Err(setup_error(
                    &url,
                    format!("endpoint {e} is plain http; use https, or set AWS_ALLOW_HTTP=true"),
                ));
            }
            b = b
                .with_endpoint(e.trim_end_matches('/'))
                .with_allow_http(e.starts_with("http://"));
        }
        match (&s.access_key_id, &s.secret_access_key) {
            (Some(k), Some(secret)) => {
                b = b.with_access_key_id(k).with_secret_access_key(secret);
                if let Some(t) = &s.session_token {
                    b = b.with_token(t);
                }
            }
            (None, None) => b = b.with_skip_signature(true),
            _ => {
                return Err(setup_error(
                    &url,
                    "an access key id needs its secret access key (and the other way round)".into(),
                ))
            }
        }
        let store = b.build().map_err(|e| setup_error(&url, e.to_string()))?;
        Ok(Bucket {
            store: Arc::new(store),
            prefix: prefix.to_string(),
            dir: None,
            runtime: runtime(&url)?,
            url,
        })
    }

    fn path(&self, name: &str) -> ObjPath {
        let name = name.trim_end_matches('/');
        if self.prefix.is_empty() {
            ObjPath::from(name)
        } else {
            ObjPath::from(format!("{}/{name}", self.prefix))
        }
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

    /// Refuses to read `name` of a local remote when it is neither a regular file nor a
    /// directory (or absent): opening a FIFO there would wait for a writer forever.
    fn check_regular(&self, name: &str) -> Result<(), TransportError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        match std::fs::metadata(dir.join(name)) {
            Ok(m) if !m.is_file() && !m.is_dir() => Err(TransportError {
                op: "get",
                name: name.to_string(),
                remote: self.url.clone(),
                message: "not a regular file".into(),
            }),
            _ => Ok(()),
        }
    }

    fn error(&self, op: &'static str, name: &str, e: object_store::Error) -> TransportError {
        TransportError {
            op,
            name: name.to_string(),
            remote: self.url.clone(),
            message: e.to_string(),
        }
    }
}

impl Transport for Bucket {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn get(&self, name: &str, limit: u64) -> Result<Got, TransportError> {
        self.check_regular(name)?;
        let path = self.path(name);
        let store = &self.store;
        let got = self.run(async move {
            let r = match store.get(&path).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return Ok(Got::Missing),
                Err(e) => return Err(e),
            };
            // The size the storage states is checked first; the body is then read in
            // chunks and cut at the limit, in case the storage sends more than it said.
            if r.meta.size > limit {
                return Ok(Got::TooLarge(r.meta.size));
            }
            let mut out = Vec::with_capacity(r.meta.size as usize);
            let mut body = r.into_stream();
            while let Some(chunk) = body.next().await {
                let chunk = chunk?;
                if (out.len() + chunk.len()) as u64 > limit {
                    return Ok(Got::TooLarge((out.len() + chunk.len()) as u64));
                }
                out.extend_from_slice(&chunk);
            }
            Ok(Got::Bytes(out))
        });
        got.map_err(|e| self.error("get", name, e))
    }

    fn get_ranges(
        &self,
        name: &str,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Vec<u8>>, TransportError> {
        self.check_regular(name)?;
        let path = self.path(name);
        let store = &self.store;
        self.run(async move { store.get_ranges(&path, ranges).await })
            .map(|v| v.into_iter().map(|b| b.to_vec()).collect())
            .map_err(|e| self.error("get", name, e))
    }

    fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), TransportError> {
        let path = self.path(name);
        let store = &self.store;
        self.run(async move { store.put(&path, PutPayload::from(bytes)).await })
            .map(|_| ())
            .map_err(|e| self.error("put", name, e))
    }

    fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool, TransportError> {
        let path = self.path(name);
        let store = &self.store;
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        match self.run(async move { store.put_opts(&path, PutPayload::from(bytes), opts).await }) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.error("put", name, e)),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, TransportError> {
        let path = self.path(prefix);
        let store = &self.store;
        let strip = if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        };
        let listed = self.run(async move {
            let mut out = Vec::new();
            let mut stream = store.list(Some(&path));
            while let Some(meta) = stream.next().await {
                let meta = meta?;
                let loc = meta.location.to_string();
                out.push(Entry {
                    name: loc.strip_prefix(&strip).unwrap_or(&loc).to_string(),
                    size: meta.size,
                    modified: meta.last_modified.timestamp(),
                });
            }
            Ok::<_, object_store::Error>(out)
        });
        let mut out = listed.map_err(|e| self.error("list", prefix, e))?;
        out.retain(|e| e.name.starts_with(prefix));
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> Result<(), TransportError> {
        let path = self.path(name);
        let store = &self.store;
        match self.run(async move { store.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error("delete", name, e)),
        }
    }
}
