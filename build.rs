//! Link-time settings of the `memoir` binary.
//!
//! On Linux with glibc, the binary is linked with packed relative relocations (DT_RELR): a
//! position-independent executable otherwise carries one 24-byte relocation record for
//! every pointer in its read-only data (tens of thousands here), which the loader reads and
//! applies at every start. Packed, they take a few kilobytes, and each command starts about
//! a millisecond sooner. The flag is used only when a probe shows that the linker and C
//! library here take it, so an older toolchain builds the binary as before.

use std::env;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return;
    }
    const FLAG: &str = "-Wl,-z,pack-relative-relocs";
    let out = PathBuf::from(var("OUT_DIR")).join("relr-probe");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let probe = Command::new(cc)
        .args(["-x", "c", "-", "-o"])
        .arg(&out)
        .args([FLAG, "-Wl,--fatal-warnings"])
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
    let runs = matches!(probe, Ok(s) if s.success())
        && Command::new(&out).status().is_ok_and(|s| s.success());
    if runs {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}
