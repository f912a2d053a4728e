//! The HTTP server of `memoir ui`: hyper on a listener the caller bound, the page and its
//! assets, the JSON API, and the store held between requests and let go when idle.
//!
//! Requests are checked ([`super::security::refusal`]) before anything else. Operations on
//! the store run one at a time off the async executor; every [`IDLE_TICK`] while none runs,
//! [`memoir::Memoir::release_if_idle`] closes the store once it has been idle for 25 ms since
//! the last one ended (and after each, once it was held for 1 s), so CLI writes from agents
//! get the LOCK and the next request reopens the store and sees them.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};

use super::api::{self, Reply};
use super::assets;
use super::params::{Body, Query};
use super::security::{refusal, TOKEN_HEADER};
use crate::cli::context::Ctx;
use crate::cli::net;
use crate::cli::output::CliError;

/// How often an idle server checks whether to let the store go.
pub const IDLE_TICK: Duration = Duration::from_millis(10);

/// Largest request body accepted.
const MAX_BODY: usize = 8 << 20;

type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// What every request handler shares.
pub struct Shared {
    /// The command-line context (store handle kept open between operations).
    pub ctx: Ctx,
    /// The launch token.
    pub token: String,
    /// The port listened on.
    pub port: u16,
    /// Held while an operation runs: operations are serialised, and the idle release never
    /// runs during one.
    ops: Mutex<()>,
}

impl Shared {
    /// What the handlers of a server on `port` with launch `token` share.
    pub fn new(ctx: Ctx, token: String, port: u16) -> Shared {
        Shared {
            ctx,
            token,
            port,
            ops: Mutex::new(()),
        }
    }

    /// Runs one operation on the store, then lets the store go if it was held too long.
    fn run<T>(&self, op: impl FnOnce(&Ctx) -> T) -> T {
        let _one = self.ops.lock().unwrap_or_else(|p| p.into_inner());
        let out = op(&self.ctx);
        self.ctx.app.operation_done();
        out
    }

    /// Between operations: closes the store if it has been idle long enough.
    fn tick(&self) {
        if let Ok(_idle) = self.ops.try_lock() {
            self.ctx.app.release_if_idle();
        }
    }
}

/// Serves until the process is interrupted (Ctrl-C, or SIGTERM on Unix). `ready` runs once
/// the interruption is watched for, just before requests are accepted.
pub fn serve(
    shared: Arc<Shared>,
    listener: std::net::TcpListener,
    ready: impl FnOnce(),
) -> Result<(), String> {
    net::runtime()?.block_on(async move {
        let ticker = Arc::clone(&shared);
        let idle = tokio::spawn(async move {
            let mut every = tokio::time::interval(IDLE_TICK);
            loop {
                every.tick().await;
                let t = Arc::clone(&ticker);
                let _ = tokio::task::spawn_blocking(move || t.tick()).await;
            }
        });
        let handler = Arc::clone(&shared);
        let served = net::serve_http1(listener, ready, move |req| {
            handle(Arc::clone(&handler), req)
        })
        .await;
        idle.abort();
        let _ = tokio::task::spawn_blocking(move || shared.ctx.app.release()).await;
        served
    })
}

fn respond(status: u16, content_type: &'static str, body: Bytes) -> HttpResponse {
    let mut r = Response::new(Full::new(body).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; object-src 'none'; \
             base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    r
}

fn json(reply: &Reply) -> HttpResponse {
    respond(
        reply.status,
        "application/json",
        Bytes::from(reply.body.to_string()),
    )
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<HttpResponse, Infallible> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let write = method != Method::GET && method != Method::HEAD;
    if let Some(why) = refusal(
        header("host"),
        header("origin"),
        shared.port,
        write,
        header(TOKEN_HEADER),
        &shared.token,
    ) {
        return Ok(json(&api::failure(&CliError::invalid(why))).tap_status(403));
    }
    if !path.starts_with("/api/") {
        if method != Method::GET && method != Method::HEAD {
            return Ok(json(&api::failure(&CliError::invalid(
                "only GET is served outside /api/",
            )))
            .tap_status(405));
        }
        return Ok(
            match assets::asset(&path, &shared.token, &shared.ctx.abs_store_path()) {
                Some((content_type, body)) => respond(200, content_type, body),
                None => respond(404, "text/plain; charset=utf-8", Bytes::from("not found\n")),
            },
        );
    }
    let query = match Query::parse(req.uri().query().unwrap_or("")) {
        Ok(q) => q,
        Err(e) => return Ok(json(&api::failure(&e))),
    };
    if method == Method::GET {
        if !api::is_get_route(&path) {
            let wrong = api::is_post_route(&path);
            return Ok(
                json(&api::failure(&not_here(&path, wrong, "POST"))).tap_status(if wrong {
                    405
                } else {
                    404
                }),
            );
        }
        let s = Arc::clone(&shared);
        let reply = tokio::task::spawn_blocking(move || s.run(|ctx| api::get(ctx, &path, &query)))
            .await
            .unwrap_or_else(|e| api::failure(&CliError::invalid(format!("request failed: {e}"))));
        return Ok(json(&reply));
    }
    if method != Method::POST || !api::is_post_route(&path) {
        let wrong = api::is_get_route(&path);
        return Ok(
            json(&api::failure(&not_here(&path, wrong, "GET"))).tap_status(
                if wrong || api::is_post_route(&path) {
                    405
                } else {
                    404
                },
            ),
        );
    }
    let bytes = match http_body_util::Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(json(&api::failure(&CliError::invalid(format!(
                "the body could not be read ({e}; at most {MAX_BODY} bytes)"
            ))))
            .tap_status(413))
        }
    };
    let body = match Body::parse(&bytes) {
        Ok(b) => b,
        Err(e) => return Ok(json(&api::failure(&e))),
    };
    let s = Arc::clone(&shared);
    let reply = tokio::task::spawn_blocking(move || s.run(|ctx| api::post(ctx, &path, &body)))
        .await
        .unwrap_or_else(|e| api::failure(&CliError::invalid(format!("request failed: {e}"))));
    Ok(json(&reply))
}

fn not_here(path: &str, other_method: bool, method: &str) -> CliError {
    if other_method {
        CliError::invalid(format!("{path} is served with {method}"))
    } else {
        CliError::new(
            crate::cli::output::exit::NOT_FOUND,
            format!("no API route {path}"),
        )
    }
}

/// Setting a response's status after it was made.
trait TapStatus {
    fn tap_status(self, status: u16) -> Self;
}

impl TapStatus for HttpResponse {
    fn tap_status(mut self, status: u16) -> Self {
        *self.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN);
        self
    }
}
