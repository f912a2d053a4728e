//! `status`, `get`, `summarize`, `search`, `recall`, `log`, `blame` and `diff`.

use super::Golden;

/// `status`, `get`, `summarize`, `search` and `recall` on store `a`.
pub(super) fn reads(g: &mut Golden) {
    g.both("status", &["status"]);

    g.both("get-one", &["get", "preferences.coding.testing"]);
    g.both(
        "get-several",
        &[
            "get",
            "infra.database",
            "nope.missing",
            "work:notes.standup",
            "experience.testing",
            "infra.deploy",
            "workflow.deploy",
        ],
    );
    g.both("get-missing", &["get", "nope.missing"]);
    g.both(
        "get-namespace",
        &["get", "-n", "work", "notes.retro", "notes.standup"],
    );
    g.both("get-at", &["get", "infra.database", "--at", "HEAD~20"]);
    g.run(
        "get-at-date-json",
        &[
            "--json",
            "get",
            "infra.database",
            "--at",
            "main@{2026-01-01T00:03}",
        ],
    );
    g.both(
        "get-branch",
        &["get", "preferences.coding.ui", "--branch", "agent-1"],
    );
    g.run(
        "get-branch-at-json",
        &[
            "--json",
            "get",
            "preferences.coding.ui",
            "--at",
            "agent-1~1",
        ],
    );
    g.both("get-branch-missing", &["get", "a.b", "--branch", "ghost"]);
    g.both("get-invalid-key", &["get", "bad key"]);
    g.both(
        "get-unknown-revision",
        &["get", "infra.database", "--at", "nosuch"],
    );
    g.run(
        "get-revision-too-far-json",
        &["--json", "get", "infra.database", "--at", "HEAD~999"],
    );
    g.run(
        "get-bad-revision-syntax-json",
        &["--json", "get", "infra.database", "--at", "HEAD@{someday}"],
    );
    g.run("get-quiet-human", &["-q", "get", "ui.theme"]);
    g.run_env(
        "get-json-env-human",
        &["get", "ui.theme"],
        &[("MEMOIR_JSON", "1")],
    );

    g.both("summarize", &["summarize"]);
    g.both("summarize-taxonomy", &["summarize", "taxonomy"]);
    g.both("summarize-timeline", &["summarize", "timeline"]);
    g.both("summarize-places", &["summarize", "places"]);
    g.both("summarize-depth-1", &["summarize", "--depth", "1"]);
    g.both(
        "summarize-depth-2-namespace",
        &["summarize", "--depth", "2", "-n", "default"],
    );
    g.both("summarize-keys", &["summarize", "--keys", "infra.*"]);
    g.both(
        "summarize-keys-union-depth",
        &[
            "summarize",
            "--keys",
            "infra.*",
            "--keys",
            "notes.?etro",
            "--depth",
            "1",
        ],
    );
    g.run(
        "summarize-keys-classes-json",
        &[
            "--json",
            "summarize",
            "--keys",
            "[io]*.d*",
            "--keys",
            "[!a-o]*",
        ],
    );
    g.run(
        "summarize-keys-no-match-json",
        &["--json", "summarize", "--keys", "nothing.*"],
    );
    g.both(
        "summarize-unknown-namespace",
        &["summarize", "-n", "nosuch"],
    );
    g.both(
        "summarize-invalid-glob",
        &["summarize", "--keys", "infra.[db"],
    );
    g.both("summarize-depth-0", &["summarize", "--depth", "0"]);
    g.run(
        "summarize-at-json",
        &["--json", "summarize", "--at", "HEAD~15", "--depth", "1"],
    );
    g.run(
        "summarize-branch-human",
        &["summarize", "--branch", "agent-1", "--depth", "3"],
    );
    g.run(
        "summarize-bad-kind-json",
        &["--json", "summarize", "everything"],
    );

    g.both("search", &["search", "postgres"]);
    g.both("search-namespace", &["search", "standup", "-n", "work"]);
    g.run(
        "search-keys-json",
        &["--json", "search", "deploy", "--keys", "infra.*"],
    );
    g.run(
        "search-since-until-json",
        &[
            "--json",
            "search",
            "tests",
            "--since",
            "2026-01-01T00:05",
            "--until",
            "2026-01-01T00:20",
        ],
    );
    g.run(
        "search-since-relative-human",
        &["search", "tests", "--since", "10.minutes.ago"],
    );
    g.both("search-recency", &["search", "tests", "--sort", "recency"]);
    g.run(
        "search-top-json",
        &["--json", "search", "deploy", "-k", "1"],
    );
    g.run(
        "search-top-alias-human",
        &["search", "deploy", "--top", "2"],
    );
    g.both("search-no-hits", &["search", "kubernetes"]);
    g.run("search-month-json", &["--json", "search", "january"]);
    g.run(
        "search-at-human",
        &["search", "postgres", "--at", "HEAD~20"],
    );
    g.run(
        "search-branch-json",
        &["--json", "search", "playwright", "--branch", "agent-1"],
    );
    g.both("search-bad-date", &["search", "x", "--since", "someday"]);
    g.run(
        "search-invalid-glob-json",
        &["--json", "search", "x", "--keys", "a.[b"],
    );

    g.both("recall-lexical", &["recall", "database"]);
    g.run(
        "recall-lexical-limit-json",
        &["--json", "recall", "deploy", "-l", "2", "-n", "default"],
    );
    g.run(
        "recall-threshold-human",
        &["recall", "deploy", "--threshold", "0.5"],
    );
    g.both("recall-no-hits", &["recall", "kubernetes"]);
    g.both(
        "recall-single-no-llm",
        &["recall", "database", "--mode", "single"],
    );
    g.run(
        "recall-tiered-no-llm-json",
        &["--json", "recall", "database", "--mode", "tiered"],
    );
    let pick = [("MEMOIR_LLM_COMMAND", "model-pick")];
    g.run_env(
        "recall-single-model-json",
        &["--json", "recall", "how do we ship?"],
        &pick,
    );
    g.run_env(
        "recall-single-model-human",
        &["recall", "how do we ship?", "--mode", "single"],
        &pick,
    );
    g.run_env(
        "recall-tiered-model-json",
        &[
            "--json",
            "recall",
            "where is the database?",
            "--mode",
            "tiered",
        ],
        &pick,
    );
    g.run_env(
        "recall-tiered-model-human",
        &[
            "recall",
            "where is the database?",
            "--mode",
            "tiered",
            "-l",
            "1",
        ],
        &pick,
    );
    g.run_env(
        "recall-model-flag-json",
        &[
            "--json", "recall", "release", "--model", "tiny", "-n", "default", "-l", "1",
        ],
        &pick,
    );
    g.run_env(
        "recall-lexical-with-model-json",
        &["--json", "recall", "database", "--mode", "lexical"],
        &pick,
    );
    g.run_env(
        "recall-model-down-json",
        &["--json", "recall", "database"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "recall-model-down-human",
        &["recall", "database", "--mode", "tiered"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "recall-model-garbage-json",
        &["--json", "recall", "database"],
        &[("MEMOIR_LLM_COMMAND", "model-classify-garbage")],
    );
    g.run(
        "recall-branch-human",
        &["recall", "playwright", "--branch", "agent-1"],
    );
    g.run(
        "recall-invalid-namespace-json",
        &["--json", "recall", "x", "-n", "bad ns"],
    );
}

/// `log`, `blame` and `diff` on store `a`.
pub(super) fn history(g: &mut Golden) {
    g.both("log", &["log"]);
    g.both("log-n", &["log", "-n", "3"]);
    g.both("log-range", &["log", "HEAD~5..HEAD~2"]);
    g.run("log-branch-range-human", &["log", "main..agent-1"]);
    g.run("log-rev-json", &["--json", "log", "agent-1", "-n", "4"]);
    g.both("log-keys", &["log", "--keys", "infra.*"]);
    g.run(
        "log-namespace-json",
        &["--json", "log", "--namespace", "work"],
    );
    g.run(
        "log-branch-json",
        &["--json", "log", "--branch", "agent-1", "-n", "2"],
    );
    g.both("log-unknown-revision", &["log", "nosuch"]);
    g.run("log-invalid-glob-human", &["log", "--keys", "a.[b"]);
    g.run("log-bad-range-json", &["--json", "log", "main..."]);

    g.both("blame", &["blame", "infra.database"]);
    g.both("blame-lines", &["blame", "workflow.deploy", "--lines"]);
    g.run(
        "blame-lines-multiline-human",
        &["blame", "notes.multiline", "--lines"],
    );
    g.both(
        "blame-limit",
        &["blame", "preferences.coding.testing", "-l", "2"],
    );
    g.both("blame-never-written", &["blame", "nope.never"]);
    g.run(
        "blame-namespace-human",
        &["blame", "-n", "work", "notes.standup"],
    );
    g.run(
        "blame-at-json",
        &["--json", "blame", "infra.database", "--at", "HEAD~20"],
    );
    g.run(
        "blame-branch-json",
        &[
            "--json",
            "blame",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.both("blame-invalid-key", &["blame", "a..b"]);

    g.both("diff-last", &["diff"]);
    g.both("diff-one", &["diff", "HEAD~4"]);
    g.both("diff-two", &["diff", "HEAD~12", "HEAD~8"]);
    g.both("diff-stat", &["diff", "HEAD~12", "HEAD", "--stat"]);
    g.both("diff-patch", &["diff", "HEAD~12", "HEAD~8", "--patch"]);
    g.both(
        "diff-stat-patch",
        &["diff", "HEAD~3", "HEAD", "--stat", "--patch"],
    );
    g.both("diff-range", &["diff", "HEAD~3..HEAD"]);
    g.run(
        "diff-namespace-json",
        &["--json", "diff", "HEAD~30", "-n", "work"],
    );
    g.run(
        "diff-keys-human",
        &["diff", "HEAD~30", "--keys", "infra.*", "--patch"],
    );
    g.both("diff-branches", &["diff", "main", "agent-1"]);
    g.both("diff-same", &["diff", "HEAD", "HEAD"]);
    g.both("diff-unknown-revision", &["diff", "nosuch"]);
    g.run(
        "diff-invalid-glob-json",
        &["--json", "diff", "--keys", "[x"],
    );
}
