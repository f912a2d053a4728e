//! `memoir --json-schema` (alias `--machine-readable`): the command line as JSON, for agents
//! that read what they can call. The shape is the reference's (`name`, `description`,
//! `version`, `exit_codes`, `env_vars`, `global_options`, `commands` grouped by kind, each
//! with `name`, `description`, `arguments` and `options`), built from clap's definition so
//! it never disagrees with the parser.

use clap::CommandFactory;
use serde_json::{json, Map, Value};

/// The groups commands are listed in (the reference's, and ours after them); a command in
/// none goes to `other`.
const GROUPS: [(&str, &[&str]); 9] = [
    ("store", &["new", "status", "fsck", "gc", "reflog"]),
    (
        "memory",
        &["remember", "recall", "get", "forget", "capture", "search"],
    ),
    (
        "branch",
        &[
            "branch",
            "checkout",
            "merge",
            "sync-branch",
            "branch-match",
            "time-travel",
            "diff",
            "log",
        ],
    ),
    ("crypto", &["proof", "verify", "blame"]),
    ("analysis", &["summarize"]),
    ("taxonomy", &["taxonomy"]),
    ("utility", &["ui", "tour", "completions", "man"]),
    ("remote", &["remote", "push", "fetch", "pull", "clone"]),
    ("hosts", &["mcp", "hook", "watch", "import", "export"]),
];

/// The schema, pretty-printed, with a final newline.
pub fn render() -> String {
    let mut root = super::Cli::command();
    root.build();
    let globals: Vec<Value> = root
        .get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(option)
        .collect();
    let mut groups: Map<String, Value> = Map::new();
    for sub in root.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        let group = GROUPS
            .iter()
            .find(|(_, names)| names.contains(&name))
            .map_or("other", |(g, _)| g);
        let entry = groups
            .entry(group.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            list.push(command(sub));
        }
    }
    let schema = json!({
        "name": "memoir",
        "description": "Git for an AI agent's memory: a versioned, content-addressed key-value store of memories",
        "version": env!("CARGO_PKG_VERSION"),
        "exit_codes": {
            "0": "success", "1": "error", "2": "not_found_or_usage", "3": "no_store",
            "4": "conflict", "5": "corrupt_store", "6": "non_fast_forward", "7": "store_busy"
        },
        "env_vars": {
            "MEMOIR_STORE": "Default store path",
            "MEMOIR_JSON": "Always output JSON (set to 1)",
            "MEMOIR_QUIET": "Suppress non-essential output (set to 1)",
            "MEMOIR_BRANCH": "Branch that reads and writes act on, without moving HEAD",
            "MEMOIR_LLM_BACKEND": "claude-cli: prompts through the `claude` command",
            "MEMOIR_LLM_MODEL": "Model name",
        },
        "global_options": globals,
        "commands": groups,
    });
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// One command: its arguments, options and (for a command with actions) subcommands.
fn command(c: &clap::Command) -> Value {
    let about = c.get_about().map(|a| a.to_string());
    let arguments: Vec<Value> = c
        .get_positionals()
        .map(|a| {
            json!({
                "name": a.get_id().as_str(),
                "required": a.is_required_set(),
                "multiple": a.get_num_args().is_some_and(|n| n.max_values() > 1),
                "description": a.get_help().map(|h| h.to_string()),
            })
        })
        .collect();
    let options: Vec<Value> = c
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(option)
        .collect();
    let mut v = json!({
        "name": c.get_name(),
        "description": about,
        "arguments": arguments,
        "options": options,
    });
    let subs: Vec<Value> = c
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(command)
        .collect();
    if !subs.is_empty() {
        v["subcommands"] = Value::Array(subs);
    }
    v
}

/// One option: its flags, whether it takes a value, its help, default and variable.
fn option(a: &clap::Arg) -> Value {
    let mut flags = Vec::new();
    if let Some(s) = a.get_short() {
        flags.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        flags.push(format!("--{l}"));
    }
    for alias in a.get_visible_aliases().into_iter().flatten() {
        flags.push(format!("--{alias}"));
    }
    let is_flag = a.get_num_args().is_some_and(|n| n.max_values() == 0)
        || matches!(
            a.get_action(),
            clap::ArgAction::SetTrue | clap::ArgAction::SetFalse | clap::ArgAction::Count
        );
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    let mut v = json!({
        "name": a.get_id().as_str(),
        "flags": flags,
        "required": a.is_required_set(),
        "is_flag": is_flag,
        "description": a.get_help().map(|h| h.to_string()),
    });
    if !defaults.is_empty() {
        v["default"] = Value::String(defaults.join(","));
    }
    if let Some(e) = a.get_env() {
        v["env_var"] = Value::String(e.to_string_lossy().into_owned());
    }
    v
}
