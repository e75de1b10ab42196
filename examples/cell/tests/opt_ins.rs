//! `cell::Program` names the workspace opt-ins as the command line does (issue 47): a program
//! given a write folder and processes writes there and starts a process, through the real
//! launch (this test's own executable is the launcher); the same program without them is
//! refused both, and nothing beside the folder changes.
//!
//! Its own `main` (no libtest harness): the launcher is this executable, which must hand a
//! launcher run to the sandbox before anything else.
#![cfg_attr(not(target_os = "linux"), allow(unused))]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("SKIPPED: cell opt-ins: the Linux backend only");
}

#[cfg(target_os = "linux")]
fn main() {
    sandbox_core::handle_args(&sandbox_linux::LinuxBackend);
    linux::a_program_opts_in_to_a_write_folder_and_processes();
    linux::folders_that_may_never_be_written_are_refused_by_the_program();
    println!("cell opt-ins: ok");
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;

    use cell::{Limits, Outcome, Program};
    use sandbox_core::Policy;

    const PYTHON: &str = "/usr/bin/python3";

    /// Writes a file in W, then forks a child that writes another and is waited for; prints
    /// what each step came to.
    const CODE: &str = r#"
import errno, os, sys
W = sys.argv[1]
def attempt(name, f):
    try:
        f()
        print(f"{name}=ok")
    except OSError as e:
        print(f"{name}={errno.errorcode.get(e.errno, e.errno)}")
def write():
    with open(W + "/by-cell", "w") as f: f.write("cell")
def fork():
    child = os.fork()
    if child == 0:
        with open(W + "/by-child", "w") as f: f.write("child")
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.WEXITSTATUS(status) == 0
attempt("write", write)
attempt("fork", fork)
"#;

    /// A folder `P` with `P/w` (the write folder) and `P/beside`, removed on drop.
    struct Workspace(PathBuf);

    impl Workspace {
        fn new(name: &str) -> Self {
            let parent =
                std::env::temp_dir().join(format!("cell-opt-ins-{name}-{}", std::process::id()));
            let _ignored = std::fs::remove_dir_all(&parent);
            std::fs::create_dir_all(parent.join("w")).unwrap();
            std::fs::write(parent.join("beside"), b"beside").unwrap();
            Self(parent)
        }

        fn write(&self) -> PathBuf {
            self.0.join("w")
        }

        fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(self.write())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for Workspace {
        fn drop(&mut self) {
            let _ignored = std::fs::remove_dir_all(&self.0);
        }
    }

    fn value(outcome: Outcome) -> String {
        match outcome {
            Outcome::Value { value, .. } => value,
            other => panic!("expected a value, got {other:?}"),
        }
    }

    pub fn a_program_opts_in_to_a_write_folder_and_processes() {
        let workspace = Workspace::new("both");
        let policy = Policy::new().allow_read("/usr").unwrap();
        let plain = Program::new(PYTHON, policy)
            .args(["-I", "-c", CODE])
            .args([workspace.write()]);
        let backend = sandbox_linux::LinuxBackend;
        let limits = Limits::default();

        // Without the opt-ins: neither, as ever.
        let outcome = cell::run(&backend, &plain, b"", &limits).unwrap();
        assert_eq!(value(outcome), "write=EACCES\nfork=EPERM\n");
        assert!(workspace.entries().is_empty());

        let opted = plain
            .clone()
            .with_write(workspace.write())
            .unwrap()
            .with_processes();
        let canonical = workspace.write().canonicalize().unwrap();
        assert_eq!(opted.policy().write_paths(), [canonical]);
        assert!(opted.policy().processes());
        let outcome = cell::run(&backend, &opted, b"", &limits).unwrap();
        assert_eq!(value(outcome), "write=ok\nfork=ok\n");
        assert_eq!(workspace.entries(), ["by-cell", "by-child"]);
        assert_eq!(
            std::fs::read(workspace.write().join("by-child")).unwrap(),
            b"child"
        );
        assert_eq!(
            std::fs::read(workspace.0.join("beside")).unwrap(),
            b"beside"
        );
    }

    pub fn folders_that_may_never_be_written_are_refused_by_the_program() {
        let program = Program::new(PYTHON, Policy::new());
        let refused = program.with_write("/usr/share").unwrap_err();
        assert_eq!(
            sandbox_core::one_line(&refused),
            "/usr/share: cannot be a write folder: it lies beneath /usr, the system's; name a folder of the application's"
        );
    }
}
