//! Nothing: the `memoir-cli` package's library target exists only so that the Python package
//! (python/Cargo.toml, feature `command`) can depend on this package. Cargo then resolves
//! the library's features for the extension's build as for the command's, and the wheel
//! compiles the library once. The command itself is `src/main.rs`.
