//! `remember` in every form, and `forget`.

use super::Golden;

/// `remember` in every form, on store `a`.
pub(super) fn writes(g: &mut Golden) {
    g.on("a");
    g.both("status-empty", &["status"]);
    g.run("status-options-after-json", &["status", "--json"]);
    g.run("status-verbose-human", &["-v", "status"]);

    g.later();
    g.run(
        "remember-one-json",
        &[
            "--json",
            "remember",
            "Prefers pytest with property tests",
            "-p",
            "preferences.coding.testing",
        ],
    );
    g.later();
    g.run(
        "remember-one-human",
        &[
            "remember",
            "Production runs PostgreSQL 16",
            "-p",
            "infra.database",
            "--source",
            "standup",
        ],
    );
    g.later();
    g.run(
        "remember-several-json",
        &[
            "--json",
            "remember",
            "Deploys are blue-green",
            "-p",
            "infra.deploy",
            "-p",
            "ops.release",
            "-p",
            "infra.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-several-human",
        &[
            "remember",
            "Releases ship on Tuesdays",
            "-p",
            "ops.schedule",
            "-p",
            "default:calendar.release",
        ],
    );
    g.later();
    g.run(
        "remember-ns-path-human",
        &["remember", "Standup is at 9:30", "-p", "work:notes.standup"],
    );
    g.later();
    g.run(
        "remember-namespace-json",
        &[
            "--json",
            "remember",
            "Retro every other Friday",
            "-n",
            "work",
            "-p",
            "notes.retro",
            "--actor",
            "agent-7",
        ],
    );
    g.later();
    g.run(
        "remember-confidence-json",
        &[
            "--json",
            "remember",
            "Probably uses Python 3.12",
            "-p",
            "infra.python",
            "-c",
            "0.6",
        ],
    );
    g.later();
    g.run_stdin(
        "remember-stdin-human",
        &["remember", "-", "-p", "notes.multiline"],
        "Line one\nLine two\n\nLine four\n",
    );
    g.later();
    g.run(
        "remember-quiet-human",
        &["-q", "remember", "Uses tabs", "-p", "style.indent"],
    );
    g.later();
    g.run(
        "remember-author-json",
        &[
            "--json",
            "remember",
            "Prefers dark mode",
            "-p",
            "ui.theme",
            "--author",
            "Other <o@example.org>",
        ],
    );

    // Refused: nothing written.
    g.run(
        "remember-mixed-namespaces-json",
        &[
            "--json", "remember", "x", "-p", "work:a.b", "-p", "team:c.d",
        ],
    );
    g.run(
        "remember-prefix-disagrees-human",
        &["remember", "x", "-p", "work:a.b", "-n", "team"],
    );
    g.run(
        "remember-empty-side-json",
        &["--json", "remember", "x", "-p", ":a.b"],
    );
    g.run(
        "remember-invalid-path-json",
        &["--json", "remember", "x", "-p", "a..b"],
    );
    g.run(
        "remember-invalid-path-human",
        &["remember", "x", "-p", "has space"],
    );
    g.run(
        "remember-invalid-namespace-json",
        &["--json", "remember", "x", "-p", "a.b", "-n", "bad ns"],
    );
    g.run(
        "remember-replace-and-policy-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--replace",
            "--merge-policy",
            "append",
        ],
    );
    g.run(
        "remember-unknown-policy-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--merge-policy",
            "sometimes",
        ],
    );
    g.run(
        "remember-bad-confidence-json",
        &["--json", "remember", "x", "-p", "a.b", "-c", "1.5"],
    );
    g.run_env(
        "remember-bad-policy-env-json",
        &["--json", "remember", "x", "-p", "a.b"],
        &[("MEMOIR_MERGE_POLICY", "sometimes")],
    );

    // Merge policies on keys that exist.
    g.later();
    g.run(
        "remember-append-default-json",
        &[
            "--json",
            "remember",
            "Flaky tests come from shared fixtures",
            "-p",
            "experience.testing",
        ],
    );
    g.later();
    g.run(
        "remember-append-default-human",
        &[
            "remember",
            "Retry network tests once",
            "-p",
            "experience.testing",
        ],
    );
    g.later();
    g.run(
        "remember-append-explicit-json",
        &[
            "--json",
            "remember",
            "Also runs mypy",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "append",
        ],
    );
    g.later();
    g.run(
        "remember-replace-json",
        &[
            "--json",
            "remember",
            "Prefers pytest, mypy and ruff",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "replace",
        ],
    );
    g.later();
    g.run(
        "remember-replace-flag-human",
        &[
            "remember",
            "Production runs PostgreSQL 17",
            "-p",
            "infra.database",
            "--replace",
        ],
    );
    g.later();
    g.run(
        "remember-gated-kept-json",
        &[
            "--json",
            "remember",
            "Maybe MySQL",
            "-p",
            "infra.database",
            "-c",
            "0.4",
        ],
    );
    g.run(
        "remember-gated-kept-human",
        &[
            "remember",
            "Maybe MySQL",
            "-p",
            "infra.database",
            "-c",
            "0.4",
        ],
    );
    g.later();
    g.run(
        "remember-gated-written-human",
        &[
            "remember",
            "Python 3.13 in production",
            "-p",
            "infra.python",
            "-c",
            "0.9",
        ],
    );
    g.later();
    g.run(
        "remember-gated-explicit-json",
        &[
            "--json",
            "remember",
            "Prefers light mode",
            "-p",
            "ui.theme",
            "--merge-policy",
            "confidence_gated",
        ],
    );
    g.later();
    g.run(
        "remember-merge-on-read-json",
        &[
            "--json",
            "remember",
            "Deploys need a change ticket",
            "-p",
            "infra.deploy",
            "--merge-policy",
            "merge_on_read",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-new-key-json",
        &[
            "--json",
            "remember",
            "Deploy with make release",
            "-p",
            "workflow.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-no-llm-human",
        &[
            "remember",
            "Run the smoke tests after deploying",
            "-p",
            "workflow.deploy",
        ],
    );
    g.later();
    g.run(
        "remember-behavior-new-key-human",
        &[
            "remember",
            "Avoid deploying on Fridays",
            "-p",
            "behavior.deploys",
        ],
    );
    g.later();
    g.run(
        "remember-llm-merge-explicit-no-llm-json",
        &[
            "--json",
            "remember",
            "Never deploy on Fridays",
            "-p",
            "behavior.deploys",
            "--merge-policy",
            "llm_merge",
        ],
    );
    g.later();
    g.run_env(
        "remember-llm-merge-model-json",
        &[
            "--json",
            "remember",
            "Tag the release after the smoke tests",
            "-p",
            "workflow.deploy",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-merge")],
    );
    g.later();
    g.run_env(
        "remember-llm-merge-model-down-human",
        &[
            "remember",
            "Announce the release in chat",
            "-p",
            "workflow.deploy",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.later();
    g.run_env(
        "remember-policy-env-json",
        &[
            "--json",
            "remember",
            "Releases need two approvals",
            "-p",
            "ops.release",
        ],
        &[("MEMOIR_MERGE_POLICY", "append")],
    );
    g.later();
    g.run_env(
        "remember-facet-cap-json",
        &[
            "--json",
            "remember",
            "Quarantine flaky tests",
            "-p",
            "experience.testing",
        ],
        &[("MEMOIR_FACET_MAX_ENTRIES", "2")],
    );
    g.later();
    g.run(
        "remember-reject-conflict-json",
        &[
            "--json",
            "remember",
            "Prefers nose",
            "-p",
            "preferences.coding.testing",
            "-p",
            "preferences.coding.linting",
            "--merge-policy",
            "reject",
        ],
    );
    g.run(
        "remember-reject-conflict-human",
        &[
            "remember",
            "Prefers nose",
            "-p",
            "preferences.coding.testing",
            "--merge-policy",
            "reject",
        ],
    );
    g.later();
    g.run(
        "remember-reject-free-human",
        &[
            "remember",
            "Uses ruff",
            "-p",
            "preferences.coding.format",
            "--merge-policy",
            "reject",
        ],
    );
    g.later();
    g.run(
        "remember-branch-json",
        &[
            "--json",
            "remember",
            "Try Playwright",
            "-p",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.later();
    g.run(
        "remember-branch-human",
        &[
            "remember",
            "Playwright works well",
            "-p",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
            "--replace",
        ],
    );
    g.later();
    g.run_env(
        "remember-branch-env-json",
        &[
            "--json",
            "remember",
            "Cypress was slower",
            "-p",
            "experience.ui",
        ],
        &[("MEMOIR_BRANCH", "agent-1")],
    );
    g.run(
        "remember-branch-invalid-json",
        &[
            "--json",
            "remember",
            "x",
            "-p",
            "a.b",
            "--branch",
            "bad..name",
        ],
    );

    // The classifier (no -p).
    g.run(
        "remember-classify-no-llm-json",
        &["--json", "remember", "Uses hypothesis for property tests"],
    );
    g.run(
        "remember-classify-no-llm-human",
        &["remember", "Uses hypothesis for property tests"],
    );
    g.later();
    g.run_env(
        "remember-classify-model-json",
        &["--json", "remember", "Uses hypothesis for property tests"],
        &[("MEMOIR_LLM_COMMAND", "model-classify")],
    );
    g.later();
    g.run_env(
        "remember-classify-model-human",
        &[
            "remember",
            "Hypothesis strategies live in conftest",
            "-n",
            "work",
        ],
        &[("MEMOIR_LLM_COMMAND", "model-classify")],
    );
    g.run_env(
        "remember-classify-garbage-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-classify-garbage")],
    );
    g.run_env(
        "remember-classify-model-down-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "remember-classify-model-down-human",
        &["remember", "Something else"],
        &[("MEMOIR_LLM_COMMAND", "model-down")],
    );
    g.run_env(
        "remember-classify-bad-provider-json",
        &["--json", "remember", "Something else"],
        &[("MEMOIR_LLM_PROVIDER", "oracle")],
    );
}

/// `forget`, with and without `--purge`, on store `a`.
pub(super) fn removal(g: &mut Golden) {
    g.later();
    g.run("forget-json", &["--json", "forget", "infra.python"]);
    g.later();
    g.run("forget-human", &["forget", "-n", "work", "notes.retro"]);
    g.later();
    g.run(
        "forget-full-key-force-human",
        &["forget", "work:notes.standup", "--force"],
    );
    g.both("forget-missing", &["forget", "nope.missing"]);
    g.run("forget-invalid-key-json", &["--json", "forget", "a..b"]);
    g.later();
    g.run(
        "forget-branch-json",
        &[
            "--json",
            "forget",
            "preferences.coding.ui",
            "--branch",
            "agent-1",
        ],
    );
    g.run(
        "forget-branch-missing-human",
        &["forget", "a.b", "--branch", "ghost"],
    );
    g.run(
        "get-forgotten-at-json",
        &["--json", "get", "infra.python", "--at", "HEAD~3"],
    );
    g.run("diff-forgotten-human", &["diff", "HEAD~3", "--patch"]);
    g.later();
    g.run(
        "forget-purge-json",
        &["--json", "forget", "--purge", "notes.multiline"],
    );
    g.later();
    g.run("forget-purge-human", &["forget", "--purge", "style.indent"]);
    g.run(
        "forget-purge-missing-json",
        &["--json", "forget", "--purge", "nope.missing"],
    );
    g.run("log-after-purge-human", &["log", "-n", "3"]);
    g.run(
        "blame-after-purge-json",
        &["--json", "blame", "notes.multiline"],
    );
    g.both("fsck-after-purge", &["fsck"]);
    g.both("status-end", &["status"]);
}
