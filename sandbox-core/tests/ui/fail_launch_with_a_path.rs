// The check needs a canary the parent made, not any path.
use sandbox_core::{raw::launch_command, Backend, Policy};

fn launch(backend: &dyn Backend) {
    // A path as text: its type's name is the same whatever crates the build links, which a
    // `std::path::Path`'s is not (the compiler names it in full where another `Path` is near).
    let canary = "/etc/passwd";
    let _ = launch_command(backend, &Policy::new(), canary, "/bin/true", ["x"]);
}

fn main() {}
