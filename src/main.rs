//! The `memoir` command line.

fn main() {
    println!("memoir {}", env!("CARGO_PKG_VERSION"));
}
