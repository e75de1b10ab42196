//! `sandbox-check` (to come).
fn main() {}
