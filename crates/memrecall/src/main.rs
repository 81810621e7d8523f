//! `memrecall`: see what a memory tree would deliver for a query, and why.

fn main() {
    println!("memrecall {}", env!("CARGO_PKG_VERSION"));
}
