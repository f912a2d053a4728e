//! Everything specific to the MCP library (`rmcp`, pinned in Cargo.toml): the server handler
//! that lists [`super::tools::specs`] and runs [`super::tools::Tools::call`] off the async
//! executor, and the stdio transport. Changes of the library's API stay in this file.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::tools::{specs, Tools, INSTRUCTIONS};

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
            .open_world(false),
    )
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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
}

/// Serves `tools` over stdin/stdout until the host closes the stream.
pub fn serve_stdio(tools: Arc<Tools>) -> Result<(), String> {
    let handler = Handler {
        tools,
        list: Arc::new(specs().into_iter().map(tool_of).collect()),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let service = handler
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP initialisation failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| format!("MCP server stopped: {e}"))?;
        Ok(())
    })
}
