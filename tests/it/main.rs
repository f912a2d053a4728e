//! The integration tests, built as one test binary: a module per part of memoir under test.
//! Shared helpers for running the binary and speaking MCP to it are in `common`.

mod actors;
mod app_history;
mod app_views;
mod cli;
mod cli_model;
mod common;
// strace, which injects the faults, is Linux's.
#[cfg(target_os = "linux")]
mod crash;
mod create_crash;
mod decode;
mod documents;
mod embed;
mod faults;
mod format;
#[cfg(unix)]
mod golden;
mod graph;
mod history;
mod hooks;
mod hostile;
mod input;
mod llm;
mod maintenance;
mod mcp;
mod mcp_concurrency;
mod mcp_hosts;
mod mcp_http;
mod names;
mod prolly;
mod python_sdk;
mod readme;
mod recall;
mod records;
mod reliability;
mod remote;
mod repo;
mod secrets;
mod signals;
mod skill;
mod store;
mod taxonomy;
mod tui;
mod typescript_sdk;
mod ui;
