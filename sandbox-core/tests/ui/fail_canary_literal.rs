// A canary is made only by `create`, which makes a fresh file.
fn main() {
    let _canary = sandbox_core::raw::Canary {
        path: std::path::PathBuf::from("/etc/passwd"),
    };
}
