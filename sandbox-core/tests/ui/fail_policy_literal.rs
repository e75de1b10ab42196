// A policy's paths are validated on the way in; they cannot be set directly.
fn main() {
    let _policy = sandbox_core::Policy {
        read: vec![std::path::PathBuf::from("relative")],
        exec: Vec::new(),
    };
}
