//! What every command prints: deterministic output and ids, plain and escaped human output,
//! and usage errors.

use super::{assert_error, cmd, Fixture};

#[test]
fn output_is_deterministic_and_ids_reproducible() {
    let script: &[&[&str]] = &[
        &["remember", "one", "-p", "a.b", "-p", "c"],
        &["remember", "two", "-p", "a.b", "--merge-policy", "append"],
        &["forget", "c"],
        &["remember", "three", "-p", "ns:x", "--branch", "side"],
    ];
    let run_all = |f: &Fixture| -> Vec<String> {
        let mut outs = Vec::new();
        for args in script {
            outs.push(f.run(true, args).stdout);
        }
        for args in [
            &["get", "a.b", "c"][..],
            &["summarize", "--depth", "1"],
            &["status"],
            &["branch"],
        ] {
            let first = f.run(true, args).stdout;
            assert_eq!(
                first,
                f.run(true, args).stdout,
                "{args:?} differs between runs"
            );
            outs.push(first);
        }
        outs
    };
    let a = Fixture::new();
    let b = Fixture::new();
    let oa = run_all(&a);
    let ob = run_all(&b);
    // Status shows the store path; everything else is byte-identical across stores.
    for (x, y) in oa.iter().zip(&ob) {
        if !x.contains("\"path\"") {
            assert_eq!(x, y);
        }
    }
    assert_eq!(
        a.repo().head_commit().unwrap(),
        b.repo().head_commit().unwrap()
    );
    assert_eq!(
        a.repo().branch_tip("side").unwrap(),
        b.repo().branch_tip("side").unwrap()
    );
}

#[test]
fn human_output_is_plain_and_escaped() {
    let f = Fixture::new();
    let o = f.run(
        false,
        &[
            "remember",
            "evil \x1b[31mred\x1b]0;title\x07 \r end",
            "-p",
            "a",
        ],
    );
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("✓ "));
    for nc in [None, Some("1")] {
        let envs: Vec<(&str, &str)> = nc.map(|v| vec![("NO_COLOR", v)]).unwrap_or_default();
        for args in [
            &["get", "a"][..],
            &["status"],
            &["summarize", "--depth", "1"],
            &["branch"],
        ] {
            let o = f.run_env(&envs, false, args);
            assert_eq!(o.code, 0);
            assert!(
                !o.stdout.contains('\x1b') && !o.stderr.contains('\x1b'),
                "{args:?}: {:?}",
                o.stdout
            );
        }
    }
    let o = f.run(false, &["get", "a"]);
    assert!(o.stdout.contains("\\u{1b}[31mred"), "{:?}", o.stdout);
    assert!(!o.stdout.contains('\x07') && !o.stdout.contains('\r'));
    // JSON keeps the content exactly.
    let v = f.ok(&["get", "a"]);
    assert_eq!(
        v["items"][0]["value"]["content"],
        "evil \x1b[31mred\x1b]0;title\x07 \r end"
    );
    // Quiet: no chatter; data still printed.
    let o = f.run_env(
        &[("MEMOIR_QUIET", "1")],
        false,
        &["remember", "y", "-p", "b"],
    );
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
    let o = f.run(false, &["-q", "get", "b"]);
    assert!(
        o.stdout.contains("default:b") && o.stdout.contains('y'),
        "{:?}",
        o.stdout
    );
}

#[test]
fn usage_errors_are_exit_2() {
    let f = Fixture::new();
    assert_eq!(f.run(false, &["no-such-command"]).code, 2);
    assert_eq!(f.run(false, &["get"]).code, 2);
    let o = f.run(true, &["remember"]);
    assert_error(&o, 2);
    assert_eq!(cmd(&[], &["--version"], None).code, 0);
    for sub in [
        "new",
        "status",
        "remember",
        "get",
        "forget",
        "summarize",
        "branch",
        "checkout",
        "export",
        "import",
    ] {
        let o = cmd(&[], &[sub, "--help"], None);
        assert_eq!(o.code, 0);
        assert!(o.stdout.contains("Example"), "{sub} --help has no example");
    }
}
