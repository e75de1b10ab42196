//! What a confined program can and cannot do on a real Mac, end to end through `sandbox-exec`.
//!
//! These checks have been compiled for `aarch64-apple-darwin` and `x86_64-apple-darwin` but have
//! not been run: the backend was written without a Mac. On a Mac, `cargo test -p sandbox-macos
//! --test macos_effects` runs them; elsewhere the binary says so and does nothing.
//!
//! The test binary plays every part, as an application does: `main` calls
//! [`sandbox_core::handle_args`] first, so the binary is its own launcher, and it is also the
//! confined program, started with [`PROBE`] and an action to try. The probe prints one line, `ok`
//! or the error the action met (`EPERM (Operation not permitted)`), and the test compares it. It
//! uses its own harness (`harness = false`) because libtest would read the launcher's flags as
//! its own.

#[cfg(target_os = "macos")]
mod macos {
    use std::ffi::{OsStr, OsString};
    use std::fs::{self, File, OpenOptions};
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};
    use std::time::Duration;

    use sandbox_core::{
        backend::check,
        raw::{launch_command, Canary, REFUSED_EXIT_CODE},
        Backend, Policy,
    };
    use sandbox_macos::MacosBackend;

    /// The first argument of a run as the confined program.
    const PROBE: &str = "--probe";

    pub fn main() {
        sandbox_core::handle_args(&MacosBackend);
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        if args.first().is_some_and(|a| a == PROBE) {
            let line = probe(&args[1..]);
            println!("{line}");
            std::process::exit(0);
        }
        run_all();
    }

    // ---- the confined side ------------------------------------------------------------------

    /// Tries the action `args` names and says what happened.
    fn probe(args: &[OsString]) -> String {
        let action = args.first().and_then(|a| a.to_str()).unwrap_or("");
        let path = args.get(1).map(PathBuf::from).unwrap_or_default();
        let result = match action {
            "noop" => Ok(()),
            "read" => File::open(&path).and_then(|mut f| f.read(&mut [0u8; 1]).map(drop)),
            "list" => fs::read_dir(&path).map(drop),
            "metadata" => fs::metadata(&path).map(drop),
            "create" => OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|_| fs::remove_file(&path)),
            "write" => OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|mut f| f.write_all(b"x")),
            "spawn" => Command::new(&path)
                .arg(sandbox_core::backend::wire::EXIT_FLAG)
                .stdin(Stdio::null())
                .status()
                .map(drop),
            "exec" => Err(Command::new(&path)
                .args(args.get(2..).unwrap_or_default())
                .exec()),
            "connect" => port(&path).and_then(|port| {
                let address = SocketAddr::from(([127, 0, 0, 1], port));
                TcpStream::connect_timeout(&address, Duration::from_secs(2)).map(drop)
            }),
            "udp" => port(&path).and_then(|port| {
                let socket = UdpSocket::bind("127.0.0.1:0")?;
                socket.send_to(b"x", ("127.0.0.1", port)).map(drop)
            }),
            other => return format!("unknown probe {other:?}"),
        };
        match result {
            Ok(()) => "ok".to_owned(),
            Err(e) => check::describe(&e),
        }
    }

    fn port(arg: &Path) -> std::io::Result<u16> {
        arg.to_str()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| std::io::Error::other("no port"))
    }

    // ---- the parent's side ------------------------------------------------------------------

    fn me() -> PathBuf {
        std::env::current_exe().unwrap().canonicalize().unwrap()
    }

    /// Runs this binary confined by `policy` as the program, with `args` after [`PROBE`].
    fn launch(policy: &Policy, args: &[&OsStr]) -> Output {
        let canary = Canary::create().unwrap();
        let output = launch_command(
            &MacosBackend,
            policy,
            &canary,
            me(),
            std::iter::once(OsStr::new(PROBE)).chain(args.iter().copied()),
        )
        .unwrap()
        .stdin(Stdio::null())
        .output()
        .unwrap();
        drop(canary);
        output
    }

    /// What the probe printed, or why the launch failed.
    fn try_probe(policy: &Policy, action: &str, arg: Option<&OsStr>) -> Result<String, String> {
        let mut args = vec![OsStr::new(action)];
        args.extend(arg);
        let output = launch(policy, &args);
        if !output.status.success() {
            return Err(format!(
                "the launch failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    fn expect_ok(policy: &Policy, action: &str, arg: Option<&OsStr>) -> Result<(), String> {
        match try_probe(policy, action, arg)? {
            line if line == "ok" => Ok(()),
            line => Err(format!("{action} {arg:?}: must work, got {line}")),
        }
    }

    fn expect_denied(policy: &Policy, action: &str, arg: Option<&OsStr>) -> Result<(), String> {
        let line = try_probe(policy, action, arg)?;
        if line.starts_with("EPERM ") || line.starts_with("EACCES ") {
            Ok(())
        } else {
            Err(format!("{action} {arg:?}: must be denied, got {line}"))
        }
    }

    /// A fresh folder in the temporary directory, canonical, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("sandbox-macos-{name}-{}", std::process::id()));
            let _ignored = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Self(dir.canonicalize().unwrap())
        }

        fn file(&self, name: &str, content: &[u8]) -> PathBuf {
            let path = self.0.join(name);
            fs::write(&path, content).unwrap();
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ignored = fs::remove_dir_all(&self.0);
        }
    }

    type Test = (&'static str, fn() -> Result<(), String>);

    /// The table of tests, each named by its function.
    macro_rules! tests {
        ($($test:ident),* $(,)?) => {
            &[$((stringify!($test), $test as fn() -> Result<(), String>)),*]
        };
    }

    const TESTS: &[Test] = tests![
        the_system_is_supported,
        the_program_runs_after_the_check,
        a_read_path_can_be_read,
        nothing_outside_the_policy_can_be_read_or_listed,
        metadata_of_any_path_can_be_read,
        no_file_is_created_or_written,
        dev_null_can_be_written,
        no_process_can_be_started,
        only_the_exec_list_can_be_executed,
        a_folder_in_the_exec_list_covers_its_programs,
        a_path_with_quotes_backslashes_and_equals_is_granted_exactly,
        the_network_is_refused,
        a_refused_launch_prints_one_line_and_exits_97,
    ];

    fn run_all() {
        let filter: Option<String> = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
        let (mut passed, mut failed) = (0, 0);
        for (name, test) in TESTS {
            if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
                continue;
            }
            match test() {
                Ok(()) => {
                    passed += 1;
                    println!("test {name} ... ok");
                }
                Err(why) => {
                    failed += 1;
                    println!("test {name} ... FAILED: {why}");
                }
            }
        }
        println!("macos_effects: {passed} passed, {failed} failed");
        if failed > 0 {
            std::process::exit(1);
        }
    }

    fn the_system_is_supported() -> Result<(), String> {
        let support = MacosBackend.support();
        if support.is_supported() {
            Ok(())
        } else {
            Err(format!("{support:?}"))
        }
    }

    fn the_program_runs_after_the_check() -> Result<(), String> {
        expect_ok(&Policy::new(), "noop", None)
    }

    fn a_read_path_can_be_read() -> Result<(), String> {
        let inside = Scratch::new("inside");
        let file = inside.file("file", b"data");
        let policy = Policy::new()
            .allow_read(&inside.0)
            .map_err(|e| e.to_string())?;
        expect_ok(&policy, "read", Some(file.as_os_str()))?;
        expect_ok(&policy, "list", Some(inside.0.as_os_str()))?;
        let only_file = Policy::new().allow_read(&file).map_err(|e| e.to_string())?;
        expect_ok(&only_file, "read", Some(file.as_os_str()))
    }

    fn nothing_outside_the_policy_can_be_read_or_listed() -> Result<(), String> {
        let inside = Scratch::new("granted");
        let outside = Scratch::new("outside");
        let file = outside.file("secret", b"secret");
        let policy = Policy::new()
            .allow_read(&inside.0)
            .map_err(|e| e.to_string())?;
        expect_denied(&policy, "read", Some(file.as_os_str()))?;
        expect_denied(&policy, "list", Some(outside.0.as_os_str()))?;
        let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
        expect_denied(&policy, "list", Some(&home))
    }

    // A deliberate gap, see docs/macos.md: resolving paths needs metadata everywhere.
    fn metadata_of_any_path_can_be_read() -> Result<(), String> {
        let outside = Scratch::new("metadata");
        let file = outside.file("file", b"x");
        expect_ok(&Policy::new(), "metadata", Some(file.as_os_str()))
    }

    fn no_file_is_created_or_written() -> Result<(), String> {
        let inside = Scratch::new("writes");
        let file = inside.file("file", b"before");
        let policy = Policy::new()
            .allow_read(&inside.0)
            .map_err(|e| e.to_string())?;
        expect_denied(&policy, "create", Some(inside.0.join("new").as_os_str()))?;
        expect_denied(&policy, "write", Some(file.as_os_str()))?;
        match fs::read(&file) {
            Ok(content) if content == b"before" => Ok(()),
            other => Err(format!("the file changed: {other:?}")),
        }
    }

    fn dev_null_can_be_written() -> Result<(), String> {
        expect_ok(&Policy::new(), "write", Some(OsStr::new("/dev/null")))
    }

    fn no_process_can_be_started() -> Result<(), String> {
        expect_denied(&Policy::new(), "spawn", Some(me().as_os_str()))
    }

    fn only_the_exec_list_can_be_executed() -> Result<(), String> {
        let policy = Policy::new()
            .allow_read("/bin")
            .map_err(|e| e.to_string())?;
        expect_denied(&policy, "exec", Some(OsStr::new("/bin/echo")))
    }

    fn a_folder_in_the_exec_list_covers_its_programs() -> Result<(), String> {
        let tools = Scratch::new("tools");
        let copy = tools.0.join("copy");
        fs::copy(me(), &copy).map_err(|e| e.to_string())?;
        let policy = Policy::new()
            .allow_exec(&tools.0)
            .map_err(|e| e.to_string())?;
        // The probe replaces itself with the copy, which is in the folder but not in the list
        // by name, and the copy runs a probe of its own.
        let args = [
            OsStr::new("exec"),
            copy.as_os_str(),
            OsStr::new(PROBE),
            OsStr::new("noop"),
        ];
        let output = launch(&policy, &args);
        let line = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if output.status.success() && line == "ok" {
            Ok(())
        } else {
            Err(format!(
                "{}: {line}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    fn a_path_with_quotes_backslashes_and_equals_is_granted_exactly() -> Result<(), String> {
        let odd = Scratch::new("odd");
        let granted = odd.0.join("say \"hi\" \\ (allow default) a=b");
        let sibling = odd.0.join("say \"hi\" \\ (allow default) a=b not");
        fs::create_dir_all(&granted).map_err(|e| e.to_string())?;
        fs::create_dir_all(&sibling).map_err(|e| e.to_string())?;
        let inside = granted.join("file");
        let beside = sibling.join("file");
        fs::write(&inside, b"x").map_err(|e| e.to_string())?;
        fs::write(&beside, b"x").map_err(|e| e.to_string())?;
        let policy = Policy::new()
            .allow_read(&granted)
            .map_err(|e| e.to_string())?;
        expect_ok(&policy, "read", Some(inside.as_os_str()))?;
        expect_denied(&policy, "read", Some(beside.as_os_str()))
    }

    fn the_network_is_refused() -> Result<(), String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let port = OsString::from(port.to_string());
        expect_denied(&Policy::new(), "connect", Some(&port))?;
        expect_denied(&Policy::new(), "udp", Some(&port))
    }

    fn a_refused_launch_prints_one_line_and_exits_97() -> Result<(), String> {
        // The canary is in the temporary directory, so this policy covers it: refused.
        let policy = Policy::new()
            .allow_read(std::env::temp_dir())
            .map_err(|e| e.to_string())?;
        let output = launch(&policy, &[OsStr::new("noop")]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let one_line = stderr.lines().count() == 1 && stderr.starts_with("sandbox: refused: ");
        if output.status.code() == Some(REFUSED_EXIT_CODE) && one_line && output.stdout.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {stderr}", output.status))
        }
    }
}

fn main() {
    #[cfg(target_os = "macos")]
    macos::main();
    #[cfg(not(target_os = "macos"))]
    println!(
        "SKIPPED: macos_effects: these checks need macOS, and this is {}; nothing ran",
        std::env::consts::OS
    );
}
