//! `proof`, `verify`, `export`, `import`, `fsck` and `gc`, and a store with damaged objects.

use super::{field, Golden};

/// `proof`, `verify`, `export`, `import`, `fsck` and `gc`: stores `a` and `c`.
pub(super) fn proofs_and_transfer(g: &mut Golden) {
    let proof = g.run("proof-json", &["--json", "proof", "infra.database"]);
    g.run("proof-human", &["proof", "infra.database"]);
    g.both("proof-absent", &["proof", "nope.missing"]);
    g.run(
        "proof-at-json",
        &["--json", "proof", "work:notes.standup", "--at", "HEAD~3"],
    );
    g.run("proof-invalid-key-json", &["--json", "proof", "a..b"]);
    let hex = field(&proof, "proof");
    let root = field(&proof, "root");
    g.both("verify", &["verify", "infra.database", "-p", &hex]);
    std::fs::write(g.path("proof.hex"), &hex).unwrap();
    g.bare(
        "verify-file-root-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            "@<TMP>/proof.hex",
            "--root",
            &root,
        ],
    );
    g.both("verify-wrong-key", &["verify", "infra.deploy", "-p", &hex]);
    g.run(
        "verify-old-root-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            &hex,
            "--at",
            "HEAD~3",
        ],
    );
    g.both("verify-bad-hex", &["verify", "infra.database", "-p", "zz"]);
    g.run(
        "verify-missing-file-json",
        &[
            "--json",
            "verify",
            "infra.database",
            "-p",
            "@<TMP>/nope.hex",
        ],
    );

    g.both("export", &["export"]);
    g.run(
        "export-namespace-at-human",
        &["export", "-n", "work", "--at", "HEAD~2"],
    );
    g.run(
        "export-file-json",
        &["--json", "export", "-o", "<TMP>/all.jsonl"],
    );
    g.run(
        "export-branch-file-human",
        &["export", "--branch", "agent-1", "-o", "<TMP>/agent.jsonl"],
    );
    g.run(
        "export-at-and-branch-json",
        &["--json", "export", "--at", "HEAD", "--branch", "agent-1"],
    );
    g.run(
        "export-unknown-namespace-json",
        &["--json", "export", "-n", "nosuch"],
    );

    g.on("c");
    g.later();
    g.run("import-file-json", &["--json", "import", "<TMP>/all.jsonl"]);
    g.later();
    g.run_stdin(
        "import-stdin-human",
        &["import", "-", "-n", "legacy"],
        concat!(
            "{\"key\": \"old.style\", \"content\": \"schema 1 record\", \"confidence\": 0.9, ",
            "\"timestamp\": 1700000000}\n",
            "\n",
            "{\"key\": \"old.other\", \"content\": \"first\"}\n",
            "{\"key\": \"old.other\", \"content\": \"last line wins\"}\n",
        ),
    );
    g.later();
    g.run(
        "import-branch-json",
        &[
            "--json",
            "import",
            "<TMP>/agent.jsonl",
            "--branch",
            "agent-1",
        ],
    );
    g.run_stdin(
        "import-bad-line-json",
        &["--json", "import", "-"],
        "{\"key\": \"a.b\", \"content\": \"x\"}\nnot json\n",
    );
    g.run_stdin(
        "import-bad-key-human",
        &["import", "-"],
        "{\"key\": \"a..b\", \"content\": \"x\"}\n",
    );
    g.run_stdin("import-empty-json", &["--json", "import", "-"], "");
    g.run("import-missing-file-human", &["import", "<TMP>/nope.jsonl"]);
    g.both("status-imported", &["status"]);
    g.run("log-imported-human", &["log"]);
    g.run(
        "get-imported-json",
        &["--json", "get", "legacy:old.style", "legacy:old.other"],
    );

    g.on("a");
    g.both("fsck", &["fsck"]);
    g.run("gc-json", &["--json", "gc"]);
    g.run("gc-human", &["gc"]);
}

/// A store whose object bytes were changed on disk: store `x`.
pub(super) fn corruption(g: &mut Golden) {
    g.bare("new-x-human", &["new", "<TMP>/x"]);
    g.on("x");
    g.later();
    g.run(
        "x-remember-human",
        &["remember", "Original text", "-p", "a.b"],
    );
    let mut tampered = 0;
    for entry in std::fs::read_dir(g.path("x/packs")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let Some(at) = bytes.windows(8).position(|w| w == b"Original") else {
            continue;
        };
        let mut bytes = bytes;
        bytes[at..at + 8].copy_from_slice(b"Tampered");
        std::fs::write(&path, bytes).unwrap();
        tampered += 1;
    }
    assert_eq!(tampered, 1, "the record's bytes are in one pack file");
    g.both("corrupt-get", &["get", "a.b"]);
    g.both("corrupt-fsck", &["fsck"]);
    g.both("corrupt-gc", &["gc"]);
    g.run("corrupt-status-json", &["--json", "status"]);
    g.run("corrupt-log-human", &["log"]);
}
