//! `branch`, `checkout`, `merge` and `time-travel`.

use super::Golden;

/// `branch`, `checkout`, `merge` and `time-travel` on store `m`.
pub(super) fn branches_and_merges(g: &mut Golden) {
    g.on("m");
    g.later();
    g.run(
        "m-remember-base-human",
        &[
            "remember",
            "Base fact",
            "-p",
            "facts.base",
            "-p",
            "facts.shared",
        ],
    );
    g.both("branch-list", &["branch"]);
    g.run("branch-create-json", &["--json", "branch", "dev"]);
    g.run("branch-create-human", &["branch", "topic"]);
    g.run(
        "branch-from-json",
        &["--json", "branch", "old", "--from", "HEAD~1"],
    );
    g.both("branch-duplicate", &["branch", "dev"]);
    g.both("branch-from-unknown", &["branch", "x", "--from", "nosuch"]);
    g.both("branch-invalid-name", &["branch", "bad..name"]);
    g.run(
        "branch-from-without-name-json",
        &["--json", "branch", "--from", "HEAD"],
    );

    g.run("checkout-json", &["--json", "checkout", "dev"]);
    g.both("status-on-dev", &["status"]);
    g.later();
    g.run(
        "m-remember-dev-human",
        &["remember", "Dev fact", "-p", "facts.dev"],
    );
    g.run("checkout-human", &["checkout", "main"]);
    g.run("checkout-current-json", &["--json", "checkout", "main"]);
    g.run("merge-ff-json", &["--json", "merge", "dev"]);
    g.run("merge-up-to-date-human", &["merge", "dev"]);
    g.run("merge-up-to-date-json", &["--json", "merge", "dev"]);

    // Three-way without conflicts.
    g.later();
    g.run(
        "m-remember-topic-json",
        &[
            "--json",
            "remember",
            "Topic fact",
            "-p",
            "facts.topic",
            "--branch",
            "topic",
        ],
    );
    g.later();
    g.run(
        "m-remember-main-human",
        &["remember", "Main fact", "-p", "facts.main"],
    );
    g.both("merge-ff-only-refused", &["merge", "topic", "--ff-only"]);
    g.later();
    g.run("merge-three-way-json", &["--json", "merge", "topic"]);
    g.both("log-merge", &["log", "-n", "3"]);
    g.run(
        "blame-through-merge-json",
        &["--json", "blame", "facts.topic"],
    );
    g.run("diff-merge-human", &["diff", "HEAD^1", "HEAD", "--patch"]);
    g.run(
        "diff-merge-second-parent-json",
        &["--json", "diff", "HEAD^2"],
    );
    g.run(
        "merge-ff-only-ok-human",
        &["merge", "main", "--into", "dev", "--ff-only"],
    );

    // Conflicts: `theirs` and main both change facts.shared; each strategy merges `theirs`
    // into its own copy of main.
    g.later();
    g.run(
        "m-remember-theirs-human",
        &[
            "remember",
            "Shared fact, their version",
            "-p",
            "facts.shared",
            "--branch",
            "theirs",
            "--replace",
        ],
    );
    g.later();
    g.run(
        "m-remember-ours-human",
        &[
            "remember",
            "Shared fact, our version",
            "-p",
            "facts.shared",
            "--replace",
        ],
    );
    for s in ["ours", "theirs", "skip", "union"] {
        g.run(
            &format!("m-branch-t-{s}-human"),
            &["branch", &format!("t-{s}")],
        );
    }
    g.both("merge-conflict", &["merge", "theirs"]);
    g.later();
    g.run(
        "merge-ours-json",
        &[
            "--json", "merge", "theirs", "--into", "t-ours", "-S", "ours",
        ],
    );
    g.later();
    g.run(
        "merge-theirs-human",
        &["merge", "theirs", "--into", "t-theirs", "-S", "theirs"],
    );
    g.later();
    g.run(
        "merge-skip-json",
        &[
            "--json", "merge", "theirs", "--into", "t-skip", "-S", "skip",
        ],
    );
    g.later();
    g.run(
        "merge-union-json",
        &[
            "--json", "merge", "theirs", "--into", "t-union", "-S", "union",
        ],
    );
    for s in ["ours", "theirs", "skip", "union"] {
        g.run(
            &format!("get-after-merge-{s}-json"),
            &[
                "--json",
                "get",
                "facts.shared",
                "--branch",
                &format!("t-{s}"),
            ],
        );
    }
    g.later();
    g.run("merge-union-human", &["merge", "theirs", "-S", "union"]);
    g.both("merge-unknown-branch", &["merge", "ghost"]);
    g.run(
        "merge-into-unknown-json",
        &["--json", "merge", "dev", "--into", "ghost"],
    );
    g.run(
        "merge-bad-strategy-json",
        &["--json", "merge", "dev", "-S", "mine"],
    );

    g.run("checkout-b-json", &["--json", "checkout", "-b", "feature"]);
    g.run("checkout-b-existing-human", &["checkout", "-b", "feature"]);
    g.both("checkout-unknown", &["checkout", "ghost"]);
    g.run("checkout-commit-human", &["checkout", "HEAD~1"]);
    g.both("status-detached", &["status"]);
    g.run("branch-list-detached-json", &["--json", "branch"]);
    g.later();
    g.run(
        "remember-detached-json",
        &[
            "--json",
            "remember",
            "Detached fact",
            "-p",
            "facts.detached",
        ],
    );
    g.run("checkout-main-json", &["--json", "checkout", "main"]);

    g.run(
        "branch-delete-merged-json",
        &["--json", "branch", "-d", "dev"],
    );
    g.both("branch-delete-unmerged", &["branch", "-d", "t-ours"]);
    g.run(
        "branch-force-delete-json",
        &["--json", "branch", "-D", "t-ours"],
    );
    g.run("branch-force-delete-human", &["branch", "-D", "t-skip"]);
    g.run(
        "branch-delete-long-json",
        &["--json", "branch", "--delete", "old"],
    );
    g.both("branch-delete-current", &["branch", "-d", "main"]);
    g.both("branch-delete-unknown", &["branch", "-d", "ghost"]);
    g.both("branch-list-after", &["branch"]);

    g.run("time-travel-json", &["--json", "time-travel", "HEAD~2"]);
    g.both("status-time-travel", &["status"]);
    g.run("checkout-back-human", &["checkout", "main"]);
    g.run(
        "time-travel-named-human",
        &["time-travel", "main~1", "-b", "past"],
    );
    g.run("checkout-back-json", &["--json", "checkout", "main"]);
    g.both("time-travel-unknown", &["time-travel", "nosuch"]);
    g.run(
        "time-travel-existing-name-json",
        &["--json", "time-travel", "HEAD", "-b", "past"],
    );

    g.run("gc-after-deletes-json", &["--json", "gc"]);
    g.run("gc-again-human", &["gc"]);
    g.both("fsck-m", &["fsck"]);
    g.both("branch-list-end", &["branch"]);
    g.both("log-end", &["log", "-n", "4"]);
}
