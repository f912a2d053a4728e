//! Link-time settings of the `memoir` binary.
//!
//! A command is a short process, so what the loader does before `main` counts. A
//! position-independent executable has every pointer in its read-only data (about 450 KB
//! here) relocated at each start, which writes, and so copies, each of those pages. On Linux
//! with glibc the binary is therefore linked as a fixed-address executable (`-no-pie`): the
//! linker resolves those pointers once, the loader has nothing to apply, and a command
//! starts about a millisecond sooner (a quarter of `memoir --version`). The cost is that the
//! binary's own code is not placed at a random address (shared libraries, heap and stack
//! still are); memoir's own code is safe Rust. Where the linker refuses `-no-pie`, packed
//! relative relocations (DT_RELR) at least shrink the loader's work to a few kilobytes.
//!
//! In a release build the linker is also given `link/memoir.order` (written by
//! `link/order.py`): the functions everyday commands run, which it places side by side, so
//! that a command's first touch of its code faults in a few windows of the binary rather
//! than dozens (0.1-0.5 ms of a command on a 2-core machine). LLD takes the file as
//! `--symbol-ordering-file` and skips names the build lacks.
//!
//! Each flag is used only when a probe shows that the linker and C library here take it, so
//! an older toolchain builds the binary as before.

use std::env;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("PROFILE") == "release" {
        order_functions(&var("OUT_DIR"));
    }
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
        // A static executable is linked another way (`-static-pie`); leave it be.
        || var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static")
    {
        return;
    }
    for flag in ["-no-pie", "-Wl,-z,pack-relative-relocs"] {
        if links_and_runs(&var("OUT_DIR"), flag) {
            println!("cargo:rustc-link-arg-bins={flag}");
            return;
        }
    }
}

/// Whether a C program linked with `flag` (in directory `out_dir`) builds without a linker
/// warning and runs, linked by the linker rustc uses: the one Cargo was told of
/// (`RUSTC_LINKER`), else `cc`, as rustc's own default.
fn links_and_runs(out_dir: &str, flag: &str) -> bool {
    let out = PathBuf::from(out_dir).join("link-probe");
    let linker = env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let probe = Command::new(linker)
        .args(["-x", "c", "-", "-o"])
        .arg(&out)
        .args([flag, "-Wl,--fatal-warnings"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(b"int main(void) { return 0; }\n")?;
            child.wait()
        });
    // And the probe must run: a C library without DT_RELR support refuses to load it.
    matches!(probe, Ok(s) if s.success()) && Command::new(&out).status().is_ok_and(|s| s.success())
}

/// Passes `link/memoir.order` to the linker when rustc's own link of an empty program, with
/// the flags this build uses, takes it: LLD does; GNU ld would refuse the option.
fn order_functions(out_dir: &str) {
    let order = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link")
        .join("memoir.order");
    println!("cargo:rerun-if-changed={}", order.display());
    let Some(order) = order.to_str().filter(|_| order.is_file()) else {
        return;
    };
    let args = [
        format!("-Wl,--symbol-ordering-file={order}"),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    let dir = PathBuf::from(out_dir).join("order-probe");
    let source = dir.join("probe.rs");
    if std::fs::create_dir_all(&dir).is_err() || std::fs::write(&source, "fn main() {}\n").is_err()
    {
        return;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut probe = Command::new(rustc);
    // The flags Cargo gives rustc for this target (`crt-static` and the like), then the two.
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    probe.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Ok(target) = env::var("TARGET") {
        probe.args(["--target", &target]);
    }
    for arg in &args {
        probe.arg("-C").arg(format!("link-arg={arg}"));
    }
    probe
        .arg("-o")
        .arg(dir.join("probe"))
        .arg(&source)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if probe.status().is_ok_and(|s| s.success()) {
        for arg in args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}
