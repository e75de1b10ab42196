//! `cargo xtask` (to come).
fn main() {}
