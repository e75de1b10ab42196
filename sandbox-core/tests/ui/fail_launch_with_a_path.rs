// The check needs a canary the parent made, not any path.
use sandbox_core::{raw::launch_command, Backend, Policy};

fn launch(backend: &dyn Backend) {
    let canary = std::path::Path::new("/etc/passwd");
    let _ = launch_command(backend, &Policy::new(), canary, "/bin/true", ["x"]);
}

fn main() {}
