// A canary has one owner, who removes it after the child has been waited for.
fn main() {
    let canary = sandbox_core::raw::Canary::create().unwrap();
    let _second = canary.clone();
}
