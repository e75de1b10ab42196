// Adding a path can fail; the result must be looked at.
#![deny(unused_must_use)]
fn main() {
    let policy = sandbox_core::Policy::new();
    policy.allow_read("usr");
}
