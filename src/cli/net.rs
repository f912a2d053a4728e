//! What the HTTP faces (`memoir mcp --http`, `memoir ui`) share to serve this machine only:
//! addresses refused before anything binds unless they are loopback, and the `Host` and
//! `Origin` checks that keep other web sites (and DNS rebinding) away from the store; and the
//! signals that stop them; and the accept loop both serve on.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::output::{exit, CliError};

/// The addresses `addr` (`HOST:PORT`) names, all of them loopback; anything else is a usage
/// error (exit 2) naming `flag`, so the store is never served beyond this machine. `why`
/// says why only this machine is served.
pub fn loopback_addrs(flag: &str, addr: &str, why: &str) -> Result<Vec<SocketAddr>, CliError> {
    let usage = |what: String| {
        CliError::new(
            exit::USAGE,
            format!(
                "{flag} {addr}: {what}; give a loopback HOST:PORT such as 127.0.0.1:8765, \
                 [::1]:8765 or localhost:8765"
            ),
        )
    };
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| usage(format!("not a usable address ({e})")))?
        .collect();
    if addrs.is_empty() {
        return Err(usage("the host resolves to no address".into()));
    }
    if let Some(outside) = addrs.iter().find(|a| !a.ip().to_canonical().is_loopback()) {
        return Err(usage(format!(
            "refusing to listen on {}, which is not a loopback address ({why})",
            outside.ip()
        )));
    }
    Ok(addrs)
}

/// Binds the first of `addrs` that can be bound (exit 1 if none can).
pub fn bind(addr: &str, addrs: &[SocketAddr]) -> Result<TcpListener, CliError> {
    let mut last = None;
    for a in addrs {
        match TcpListener::bind(a) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(CliError::invalid(format!(
        "cannot listen on {addr}: {}",
        last.map_or_else(|| "no address".to_string(), |e| e.to_string())
    )))
}

/// Splits `host[:port]` (an IPv6 host in brackets) into the host and the port.
fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            p => Some((host, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host, Some(port.parse().ok()?))),
        Some(_) => None,
        None => Some((authority, None)),
    }
}

/// Whether `host` names this machine: `localhost` or a loopback address.
fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// Whether a `Host` header names this machine (and, when `port` is given, that port): the
/// defence against DNS rebinding, where a foreign name resolves to 127.0.0.1.
pub fn host_allowed(host: Option<&str>, port: Option<u16>) -> bool {
    let Some((name, p)) = host.and_then(split_authority) else {
        return false;
    };
    is_loopback_name(name) && (port.is_none() || p.is_none() || p == port)
}

/// Whether an `Origin` header is a page served from this machine over plain HTTP (and, when
/// `port` is given, from that port). `None` (no header: not a browser's cross-site request)
/// is allowed; `null` and every other origin are not.
pub fn origin_allowed(origin: Option<&str>, port: Option<u16>) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let Some(authority) = origin.strip_prefix("http://") else {
        return false;
    };
    let Some((name, p)) = split_authority(authority) else {
        return false;
    };
    is_loopback_name(name) && (port.is_none() || p == port)
}

/// Watches for Ctrl-C (and SIGTERM on Unix) from now on; the future resolves on the first.
#[cfg(unix)]
pub fn watch_signals() -> Result<impl std::future::Future<Output = ()>, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let fail = |e: std::io::Error| format!("cannot watch for signals: {e}");
    let mut term = signal(SignalKind::terminate()).map_err(fail)?;
    let mut int = signal(SignalKind::interrupt()).map_err(fail)?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// Watches for Ctrl-C; the future resolves on it.
#[cfg(not(unix))]
pub fn watch_signals() -> Result<impl std::future::Future<Output = ()>, String> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// The async runtime a server runs on: two worker threads, timers and I/O.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Serves HTTP/1 on `listener` (bound by the caller, which chose and checked the address),
/// each request answered by `handle`, until the process is interrupted (Ctrl-C, or SIGTERM
/// on Unix). `ready` runs once the interruption is watched for, just before connections are
/// accepted. Runs inside a tokio runtime ([`runtime`]).
pub async fn serve_http1<H, F, B>(
    listener: TcpListener,
    ready: impl FnOnce(),
    handle: H,
) -> Result<(), String>
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + 'static,
    F: Future<Output = Result<Response<B>, Infallible>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot configure the listener: {e}"))?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| format!("cannot use the listener: {e}"))?;
    let mut shutdown = std::pin::pin!(watch_signals()?);
    ready();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Small replies go out at once, not after the peer's delayed ACK.
                    let _ = stream.set_nodelay(true);
                    let handle = handle.clone();
                    tokio::spawn(async move {
                        // A connection that breaks off only ends that connection.
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service_fn(handle))
                            .await;
                    });
                }
                // Out of descriptors and the like: wait a moment instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            () = &mut shutdown => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert!(host_allowed(Some("127.0.0.1:8765"), Some(8765)));
        assert!(host_allowed(Some("localhost:8765"), Some(8765)));
        assert!(host_allowed(Some("[::1]:8765"), Some(8765)));
        assert!(host_allowed(Some("127.0.0.1"), Some(8765)));
        assert!(!host_allowed(Some("127.0.0.1:9"), Some(8765)));
        assert!(!host_allowed(Some("evil.example:8765"), Some(8765)));
        assert!(!host_allowed(Some("192.168.1.2:8765"), None));
        assert!(!host_allowed(None, None));
        assert!(!host_allowed(Some("[::1"), None));
    }

    #[test]
    fn origins() {
        assert!(origin_allowed(None, Some(1)));
        assert!(origin_allowed(Some("http://127.0.0.1:8765"), Some(8765)));
        assert!(origin_allowed(Some("http://localhost:3000"), None));
        assert!(origin_allowed(Some("http://[::1]:8765"), Some(8765)));
        assert!(!origin_allowed(Some("http://localhost:3000"), Some(8765)));
        assert!(!origin_allowed(Some("https://evil.example"), None));
        assert!(!origin_allowed(
            Some("http://evil.example:8765"),
            Some(8765)
        ));
        assert!(!origin_allowed(Some("null"), None));
        assert!(!origin_allowed(Some("https://127.0.0.1:8765"), Some(8765)));
    }

    #[test]
    fn only_loopback_addresses() {
        assert!(loopback_addrs("--addr", "127.0.0.1:0", "x").is_ok());
        let e = loopback_addrs("--addr", "0.0.0.0:0", "no authentication").unwrap_err();
        assert_eq!(e.code, exit::USAGE);
        assert!(e
            .message
            .contains("not a loopback address (no authentication)"));
        assert!(loopback_addrs("--addr", "nonsense", "x").is_err());
    }
}
