//! `memoir completions SHELL`, `memoir man` and `memoir --version`: generated from the parser's
//! own definitions, and usable by the tools that read them.

use super::cmd;

/// Every command `memoir --help` lists.
fn command_names() -> Vec<String> {
    let help = cmd(&[], &["--help"], None).stdout;
    let section = help.split("Commands:").nth(1).expect("a Commands section");
    section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn completions_load_in_bash_and_name_every_command() {
    let names = command_names();
    assert!(names.len() > 30, "{names:?}");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = cmd(&[], &["completions", shell], None);
        assert_eq!(o.code, 0, "{shell}: {}", o.stderr);
        for name in &names {
            assert!(o.stdout.contains(name.as_str()), "{shell} lacks {name}");
        }
    }
    // bash itself loads the script and registers it for `memoir`.
    let script = cmd(&[], &["completions", "bash"], None).stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memoir.bash");
    std::fs::write(&path, script).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; complete -p memoir; COMP_WORDS=(memoir rem); COMP_CWORD=1; \
             _memoir memoir rem memoir; echo \"${{COMPREPLY[@]}}\"",
            path.display()
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-F _memoir memoir"), "{text}");
    assert!(
        text.contains("remember") && text.contains("remote"),
        "{text}"
    );
    let o = cmd(&[], &["completions", "tcsh"], None);
    assert_eq!(o.code, 2, "{}", o.stderr);
}

#[test]
fn the_manual_page_is_roff_naming_every_command() {
    let o = cmd(&[], &["man"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains(".TH memoir 1"), "{}", &o.stdout[..200]);
    assert!(o.stdout.contains(".SH NAME") && o.stdout.contains(".SH SYNOPSIS"));
    for name in command_names() {
        // roff spells a hyphen `\-`.
        assert!(
            o.stdout.contains(&name.replace('-', "\\-")),
            "the page lacks {name}"
        );
    }
    // groff, which `man` runs, formats it without a warning.
    let Some(groff) = crate::common::require(
        crate::common::on_path(&["groff"]),
        "needs groff on PATH (Debian: apt-get install groff-base)",
    ) else {
        return;
    };
    let out = crate::common::run_with_stdin(
        std::process::Command::new(groff)
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .stderr(std::process::Stdio::piped()),
        o.stdout.as_bytes(),
    );
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "groff warned");
}

#[test]
fn version_names_the_commit_the_format_and_the_features() {
    for flag in ["--version", "-V"] {
        let o = cmd(&[], &[flag], None);
        assert_eq!(o.code, 0);
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lines.len(), 3, "{}", o.stdout);
        let commit = lines[0]
            .strip_prefix(&format!("memoir {} (commit ", env!("CARGO_PKG_VERSION")))
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{}", lines[0]));
        assert!(
            commit == "unknown"
                || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
            "{commit}"
        );
        assert_eq!(
            lines[1],
            format!("store format {}", memoir::store::FORMAT_VERSION)
        );
        assert!(
            lines[2].starts_with("features: cli, remote, http"),
            "{}",
            lines[2]
        );
    }
}
