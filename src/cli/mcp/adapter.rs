//! Everything specific to the MCP library (`rmcp`, pinned in Cargo.toml): the server handler
//! that lists [`super::tools::specs`] and runs [`super::tools::Tools::call`] off the async
//! executor, and the two transports: stdio, and streamable HTTP (rmcp's tower service, served
//! by hyper on a listener the caller bound). Changes of the library's API stay in this file.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::super::net;
use super::super::output::{exit, CliError};
use super::jsonrpc::{error_response, triage, Triage, INVALID_REQUEST};
use super::resources::TEMPLATE;
use super::tools::{specs, Tools, INSTRUCTIONS};

#[derive(Clone)]
struct Handler {
    tools: Arc<Tools>,
    list: Arc<Vec<Tool>>,
}

fn tool_of(s: super::tools::Spec) -> Tool {
    Tool::new(s.name, s.description, Arc::new(s.input_schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(s.read_only)
            .destructive(s.destructive)
            .idempotent(s.idempotent)
            .open_world(s.open_world),
    )
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("memoir", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.list.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tools = Arc::clone(&self.tools);
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let answer = tokio::task::spawn_blocking(move || tools.call(&name, args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool call failed: {e}"), None))?;
        let content = vec![ContentBlock::text(answer.text)];
        let mut result = if answer.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = Some(answer.structured);
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let tools = Arc::clone(&self.tools);
        let cursor = request.and_then(|r| r.cursor);
        let (listed, next) = blocking(move || tools.list_resources(cursor.as_deref())).await?;
        let resources = listed
            .into_iter()
            .map(|l| {
                Resource::new(l.uri, l.name)
                    .with_title(l.title)
                    .with_mime_type("text/plain")
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new(TEMPLATE, "memory")
            .with_title("A memory")
            .with_description(
                "The memory at a key: memoir://NAMESPACE/PATH (percent-encoded); \
                 add ?at=REV to read it at a revision",
            )
            .with_mime_type("text/plain");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let tools = Arc::clone(&self.tools);
        let uri = request.uri;
        let asked = uri.clone();
        let text = blocking(move || tools.read_resource(&asked)).await?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }
}

/// Runs a blocking resource read off the executor; its failure as the protocol's error (a
/// missing memory is "resource not found", a malformed URI "invalid params").
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CliError> + Send + 'static,
) -> Result<T, ErrorData> {
    match tokio::task::spawn_blocking(work).await {
        Err(e) => Err(ErrorData::internal_error(format!("read failed: {e}"), None)),
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            let data = Some(serde_json::json!({ "code": e.code }));
            Err(match e.code {
                exit::NOT_FOUND => ErrorData::resource_not_found(e.message, data),
                exit::ERROR => ErrorData::internal_error(e.message, data),
                _ => ErrorData::invalid_params(e.message, data),
            })
        }
    }
}

impl Handler {
    fn new(tools: Arc<Tools>) -> Self {
        Handler {
            tools,
            list: Arc::new(specs().into_iter().map(tool_of).collect()),
        }
    }
}

/// Serves `tools` over stdin/stdout until the host closes the stream. The library talks to
/// one end of an in-memory pipe; [`super::stdio::pump`] frames the real streams (malformed
/// messages and batches are answered there).
pub fn serve_stdio(tools: Arc<Tools>) -> Result<(), String> {
    let handler = Handler::new(tools);
    net::runtime()?.block_on(async move {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let pump = tokio::spawn(super::stdio::pump(
            tokio::io::stdin(),
            tokio::io::stdout(),
            ours,
        ));
        let (read, write) = tokio::io::split(theirs);
        // The pump bounds lines already; the library must take every line it passes on.
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new(read, write)
            .with_max_line_length(super::stdio::MAX_MESSAGE_BYTES + 1);
        let service = handler
            .serve(transport)
            .await
            .map_err(|e| format!("MCP initialisation failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| format!("MCP server stopped: {e}"))?;
        pump.await
            .map_err(|e| format!("MCP stdio stopped: {e}"))?
            .map_err(|e| format!("MCP stdio failed: {e}"))
    })
}

/// The path the streamable HTTP endpoint answers on; every other path is 404.
pub const HTTP_PATH: &str = "/mcp";

/// Browser origins accepted on the HTTP transport (pages served from this machine); a request
/// carrying any other `Origin` is refused, so a web page cannot drive the store.
const LOCAL_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

type HttpService = StreamableHttpService<Handler, LocalSessionManager>;

/// Most HTTP sessions kept at once: a client that opens sessions without end (each
/// `initialize` is one) pushes out the oldest instead of growing the server without bound.
pub const MAX_SESSIONS: usize = 64;

/// How long a session may go unused before the server ends it.
const SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// The sessions the server keeps, oldest first, for [`MAX_SESSIONS`].
struct Sessions {
    manager: Arc<LocalSessionManager>,
    order: tokio::sync::Mutex<std::collections::VecDeque<SessionId>>,
}

impl Sessions {
    /// Before a session is made: forgets the ones that ended, and ends the oldest while
    /// there are [`MAX_SESSIONS`].
    async fn make_room(&self) {
        let mut order = self.order.lock().await;
        let mut live = std::collections::VecDeque::with_capacity(order.len());
        for id in order.drain(..) {
            if self.manager.has_session(&id).await.unwrap_or(false) {
                live.push_back(id);
            }
        }
        while live.len() >= MAX_SESSIONS {
            if let Some(oldest) = live.pop_front() {
                let _ = self.manager.close_session(&oldest).await;
            }
        }
        *order = live;
    }

    /// Records the session a response opened, if it did.
    async fn opened(&self, response: &HttpResponse) {
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok());
        if let Some(id) = id {
            self.order.lock().await.push_back(SessionId::from(id));
        }
    }
}
type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// Serves `tools` over MCP streamable HTTP at [`HTTP_PATH`] on `listener` (already bound by
/// the caller, which chose and checked the address) until the process is interrupted
/// (Ctrl-C, or SIGTERM on Unix). `ready` runs once the interruption is watched for, just
/// before requests are accepted. Each client session gets its own protocol state; all of
/// them share `tools`, whose calls are serialised. Only `Host` headers naming a loopback
/// host are accepted (DNS rebinding).
pub fn serve_http(
    tools: Arc<Tools>,
    listener: std::net::TcpListener,
    ready: impl FnOnce(),
) -> Result<(), String> {
    let handler = Handler::new(tools);
    net::runtime()?.block_on(async move {
        let config = StreamableHttpServerConfig::default().with_allowed_origins(LOCAL_ORIGINS);
        let stop = config.cancellation_token.clone();
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(SESSION_IDLE);
        let manager = Arc::new(manager);
        let sessions = Arc::new(Sessions {
            manager: manager.clone(),
            order: Default::default(),
        });
        let service: HttpService =
            StreamableHttpService::new(move || Ok(handler.clone()), manager, config);
        let served = net::serve_http1(listener, ready, move |req| {
            route(service.clone(), sessions.clone(), req)
        })
        .await;
        stop.cancel();
        served
    })
}

/// Largest request body accepted (an MCP message; memories are far smaller).
const MAX_BODY: usize = super::stdio::MAX_MESSAGE_BYTES;

fn json_reply(status: StatusCode, body: &serde_json::Value) -> HttpResponse {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// A POST's body checked as one JSON-RPC message (the library answers text that is not
/// JSON with HTTP 415 and no JSON-RPC error); a well-formed one is handed on.
async fn checked_post(
    service: HttpService,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let (parts, body) = req.into_parts();
    let bytes = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let error = error_response(
                serde_json::Value::Null,
                INVALID_REQUEST,
                &format!(
                    "Invalid Request: the body could not be read ({e}; at most {MAX_BODY} bytes)"
                ),
            );
            return Ok(json_reply(StatusCode::PAYLOAD_TOO_LARGE, &error));
        }
    };
    match triage(&bytes) {
        Triage::Single => Ok(service
            .handle(Request::from_parts(parts, Full::new(bytes)))
            .await),
        Triage::Reject(error) => Ok(json_reply(StatusCode::BAD_REQUEST, &error)),
        Triage::Batch(_) => Ok(json_reply(
            StatusCode::BAD_REQUEST,
            &error_response(
                serde_json::Value::Null,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not accepted over streamable HTTP",
            ),
        )),
    }
}

async fn route(
    service: HttpService,
    sessions: Arc<Sessions>,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let host = header(hyper::header::HOST);
    let origin = header(hyper::header::ORIGIN);
    if !net::host_allowed(host, None) || !net::origin_allowed(origin, None) {
        let mut refused = Response::new(
            Full::new(Bytes::from_static(
                b"forbidden: only pages and clients on this machine are served\n",
            ))
            .boxed(),
        );
        *refused.status_mut() = StatusCode::FORBIDDEN;
        return Ok(refused);
    }
    if req.uri().path() != HTTP_PATH {
        let mut not_found = Response::new(
            Full::new(Bytes::from(format!(
                "not found: the MCP endpoint is {HTTP_PATH}\n"
            )))
            .boxed(),
        );
        *not_found.status_mut() = StatusCode::NOT_FOUND;
        return Ok(not_found);
    }
    if req.method() == hyper::Method::POST {
        // A POST without a session opens one (an `initialize`).
        let opens = !req.headers().contains_key("mcp-session-id");
        if opens {
            sessions.make_room().await;
        }
        let response = checked_post(service, req).await?;
        if opens {
            sessions.opened(&response).await;
        }
        return Ok(response);
    }
    let deleting = req.method() == hyper::Method::DELETE;
    let mut response = service.handle(req).await;
    // A session ended is answered 200, as clients expect (the library says 202).
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    Ok(response)
}
