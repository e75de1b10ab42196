//! Network by host (issue 48), through the real binary: with `--allow-host` a confined
//! `python3 -I` reaches the named loopback servers through the launch's proxy with unchanged
//! `urllib` (plain HTTP by address and by `localhost`, HTTPS with the certificate checked by the
//! program), and reaches a server it was not given by no route (`urllib`, a raw connect, a
//! `CONNECT` through the proxy, a UDP datagram); a program ignoring the proxy is refused at
//! once. Without `--allow-host` nothing changes. Every server here listens on 127.0.0.1.

#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;

/// A plain HTTP server on a loopback port of its own that answers every request with `body`,
/// counting the connections it took.
struct Server {
    port: u16,
    taken: Arc<AtomicUsize>,
}

impl Server {
    fn start(body: &'static str) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&taken);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let _ = write!(
                    stream,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self { port, taken }
    }

    fn taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }
}

/// A folder every user may read, removed on drop.
fn shared_folder(name: &str) -> Scratch {
    let folder = Scratch::new(name);
    std::fs::set_permissions(&folder.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    folder
}

/// `sandbox-check [FLAGS] --read /usr [--read R]... -- python3 -I -c PRELUDE+NET+code ARGS`, as
/// `user` (`None`: this one).
fn confined(
    user: Option<u32>,
    flags: &[String],
    read: &[&Path],
    code: &str,
    args: &[String],
) -> Output {
    let mut command = match user {
        None => sandbox_check(),
        Some(_) => sandbox_check_as_ordinary_user(),
    };
    command.args(flags).arg("--read").arg("/usr");
    for path in read {
        command.arg("--read").arg(path);
    }
    command
        .arg("--")
        .arg(PYTHON)
        .arg("-I")
        .arg("-c")
        .arg(format!("{PRELUDE}\n{NET}\n{code}"))
        .args(args)
        .stdin(Stdio::null());
    run(command)
}

/// Helpers for the confined Python: `report(name, value)` and `get(url)`, which reads a URL with
/// `urllib` as a proxy-aware client does and says `body:TEXT`, `HTTP<status>` or the errno.
const NET: &str = r#"
import socket, ssl, urllib.request, urllib.error
def report(name, value):
    print(f"{name}={value}", flush=True)
def get(url, opener=None, **kw):
    try:
        open_ = opener.open if opener else urllib.request.urlopen
        with open_(url, timeout=20, **kw) as r:
            return "body:" + r.read().decode()
    except urllib.error.HTTPError as e:
        return f"HTTP{e.code}"
    except urllib.error.URLError as e:
        r = e.reason
        if isinstance(r, ssl.SSLError):
            return r.reason or type(r).__name__
        return errno.errorcode.get(getattr(r, "errno", None), type(r).__name__)
def proxy_port():
    return int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
"#;

#[test]
fn an_allowed_address_is_read_and_an_other_port_is_reached_by_no_route() {
    for user in users() {
        let (p, q) = (Server::start("from P"), Server::start("from Q"));
        let code = r#"
P, Q = int(sys.argv[1]), int(sys.argv[2])
report("urllib P", get(f"http://127.0.0.1:{P}/"))
report("urllib Q", get(f"http://127.0.0.1:{Q}/"))
attempt("raw connect Q", lambda: socket.create_connection(("127.0.0.1", Q), timeout=20).close())
attempt("raw connect Q over IPv6", lambda: socket.create_connection(("::1", Q), timeout=20).close())
def connect_q():
    s = socket.create_connection(("127.0.0.1", proxy_port()), timeout=20)
    s.sendall(f"CONNECT 127.0.0.1:{Q} HTTP/1.1\r\nHost: 127.0.0.1:{Q}\r\n\r\n".encode())
    return s.recv(200).split(b"\r\n")[0].decode()
report("CONNECT Q", connect_q())
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", Q))
attempt("UDP datagram to Q", udp)
def fast_open():
    s = socket.socket()
    s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", Q))
attempt("TCP Fast Open to Q", fast_open)
attempt("Unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
def listen():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
attempt("listen", listen)
direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
report("urllib P ignoring the proxy", get(f"http://127.0.0.1:{P}/", direct))
"#;
        let flags = vec![format!("--allow-host=127.0.0.1:{}", p.port)];
        let output = confined(
            user,
            &flags,
            &[],
            code,
            &[p.port.to_string(), q.port.to_string()],
        );
        assert_results(
            &results(&output),
            &[
                ("urllib P", "body:from P"),
                // The proxy's refusal.
                ("urllib Q", "HTTP403"),
                // Landlock's TCP rule: only the proxy's port.
                ("raw connect Q", "EACCES"),
                ("raw connect Q over IPv6", "EACCES"),
                ("CONNECT Q", "HTTP/1.1 403 Forbidden"),
                // The seccomp table: no datagram, Unix or listening socket.
                ("UDP datagram to Q", "EPERM"),
                // A connect by `sendto`, which Landlock's rule covers as well.
                ("TCP Fast Open to Q", "EACCES"),
                ("Unix socket", "EPERM"),
                ("listen", "EPERM"),
                ("urllib P ignoring the proxy", "EACCES"),
            ],
        );
        assert_eq!(q.taken(), 0, "Q was reached");
        assert_eq!(p.taken(), 1, "P was read once");
    }
}

#[test]
fn localhost_is_loopback_and_https_stays_end_to_end() {
    let Some(tls) = TlsServer::start() else {
        return;
    };
    for user in users() {
        let p = Server::start("from P");
        let code = r#"
P, S, CERT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
report("http localhost P", get(f"http://localhost:{P}/"))
report("https localhost S", get(f"https://localhost:{S}/", context=ssl.create_default_context(cafile=CERT)))
report("https localhost S unverified", get(f"https://localhost:{S}/", context=ssl.create_default_context()))
report("http 127.0.0.1 P", get(f"http://127.0.0.1:{P}/"))
"#;
        let flags = vec![
            format!("--allow-host=localhost:{}", p.port),
            format!("--allow-host=localhost:{}", tls.port),
        ];
        let output = confined(
            user,
            &flags,
            &[&tls.folder.0],
            code,
            &[
                p.port.to_string(),
                tls.port.to_string(),
                tls.cert().display().to_string(),
            ],
        );
        assert_results(
            &results(&output),
            &[
                ("http localhost P", "body:from P"),
                ("https localhost S", "body:from S"),
                // The program checks the certificate itself: the proxy only tunnels.
                ("https localhost S unverified", "CERTIFICATE_VERIFY_FAILED"),
                // `localhost:P` allows that name; the literal address is another destination.
                ("http 127.0.0.1 P", "HTTP403"),
            ],
        );
    }
}

#[test]
fn without_allow_host_every_socket_is_refused_and_no_proxy_is_named() {
    for user in users() {
        let p = Server::start("from P");
        let code = r#"
P = int(sys.argv[1])
attempt("TCP socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
report("proxy variables", sorted(k for k in os.environ if "proxy" in k.lower()))
"#;
        let output = confined(user, &[], &[], code, &[p.port.to_string()]);
        assert_results(
            &results(&output),
            &[("TCP socket", "EPERM"), ("proxy variables", "[]")],
        );
        assert_eq!(p.taken(), 0);
    }
}

#[test]
fn the_launch_connection_bound_refuses_past_it_and_the_log_has_each_decision() {
    let p = Server::start("from P");
    let folder = shared_folder("net-log");
    let log = folder.0.join("net.log");
    let code = r#"
P = int(sys.argv[1])
report("first", get(f"http://127.0.0.1:{P}/"))
report("second", get(f"http://127.0.0.1:{P}/"))
report("third", get(f"http://127.0.0.1:{P + 1}/"))
"#;
    let flags = vec![
        format!("--allow-host=127.0.0.1:{}", p.port),
        "--max-connections=1".to_owned(),
        format!("--net-log={}", log.display()),
    ];
    let output = confined(None, &flags, &[], code, &[p.port.to_string()]);
    assert_results(
        &results(&output),
        &[
            ("first", "body:from P"),
            ("second", "HTTP429"),
            ("third", "HTTP429"),
        ],
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let said: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            (
                l["decision"].as_str().unwrap().to_owned(),
                l["destination"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        said,
        vec![
            ("allowed".to_owned(), format!("127.0.0.1:{}", p.port)),
            ("refused".to_owned(), format!("127.0.0.1:{}", p.port)),
            ("refused".to_owned(), format!("127.0.0.1:{}", p.port + 1)),
        ]
    );
}

/// A TLS server on a loopback port (Python's `ssl`, unconfined), with a self-signed
/// certificate for `localhost` made by `openssl`, in a folder every user may read.
struct TlsServer {
    port: u16,
    folder: Scratch,
    child: std::process::Child,
}

impl TlsServer {
    fn start() -> Option<Self> {
        let folder = shared_folder("net-tls");
        let made = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args([
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
            ])
            .arg("-keyout")
            .arg(folder.0.join("key.pem"))
            .arg("-out")
            .arg(folder.0.join("cert.pem"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !matches!(made, Ok(status) if status.success()) {
            skipped(
                "openssl cannot make a self-signed certificate here (cargo xtask ci installs it)",
            );
            return None;
        }
        for file in ["key.pem", "cert.pem"] {
            std::fs::set_permissions(folder.0.join(file), std::fs::Permissions::from_mode(0o644))
                .unwrap();
        }
        let mut child = Command::new(PYTHON)
            .arg("-I")
            .arg("-c")
            .arg(TLS_SERVER)
            .arg(folder.0.join("cert.pem"))
            .arg(folder.0.join("key.pem"))
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Some(Self {
            port,
            folder,
            child,
        })
    }

    fn cert(&self) -> PathBuf {
        self.folder.0.join("cert.pem")
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TLS_SERVER: &str = r#"
import http.server, ssl, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"from S")
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

#[test]
fn explain_names_each_refused_destination_and_the_flag_suggest_learns_none() {
    for user in users() {
        let (p, q) = (Server::start("from P"), Server::start("from Q"));
        let folder = shared_folder("net-explain");
        if let Some(uid) = user {
            std::os::unix::fs::chown(&folder.0, Some(uid), Some(uid)).unwrap();
        }
        let learnt = folder.0.join("learnt.toml");
        let code = r#"
P, Q = int(sys.argv[1]), int(sys.argv[2])
report("urllib P", get(f"http://127.0.0.1:{P}/"))
report("urllib Q", get(f"http://127.0.0.1:{Q}/"))
"#;
        let flags = vec![
            "--explain".to_owned(),
            format!("--suggest={}", learnt.display()),
            format!("--allow-host=127.0.0.1:{}", p.port),
        ];
        let output = confined(
            user,
            &flags,
            &[],
            code,
            &[p.port.to_string(), q.port.to_string()],
        );
        assert_results(
            &results(&output),
            &[("urllib P", "body:from P"), ("urllib Q", "HTTP403")],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        let named = format!(
            "explain: the proxy refused 127.0.0.1:{q} (not allowed); --allow-host 127.0.0.1:{q} would allow it\n",
            q = q.port
        );
        assert!(stderr.contains(&named), "{stderr}");
        assert!(
            !stderr.contains(&format!("127.0.0.1:{} (", p.port)),
            "{stderr}"
        );
        // The profile keeps the host the command line gave, and learns none.
        let profile = std::fs::read_to_string(&learnt).unwrap();
        assert!(
            profile.contains(&format!("hosts = [\"127.0.0.1:{}\"]", p.port)),
            "{profile}"
        );
        let entries: Vec<&str> = profile.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(
            !entries.iter().any(|l| l.contains(&q.port.to_string())),
            "{profile}"
        );
        assert_eq!(q.taken(), 0);
    }
}

#[test]
fn a_profiles_hosts_are_the_launchs_and_the_report_names_them() {
    let p = Server::start("from P");
    let folder = shared_folder("net-profile");
    let profile = folder.0.join("net.toml");
    std::fs::write(
        &profile,
        format!("read = [\"/usr\"]\nhosts = [\"localhost:{}\"]\n", p.port),
    )
    .unwrap();
    let output = run({
        let mut command = sandbox_check();
        command
            .arg("--json")
            .arg("--policy")
            .arg(&profile)
            .args(["--", PYTHON, "-I", "-c"])
            .arg(format!(
                "{PRELUDE}\n{NET}\nreport('read', get('http://localhost:{}/'))",
                p.port
            ))
            .stdin(Stdio::null());
        command
    });
    assert_results(&results(&output), &[("read", "body:from P")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(
        report["opt_ins"],
        serde_json::json!([format!("host localhost:{}", p.port)])
    );
    // A destination that is not one is refused by name, with the file.
    std::fs::write(&profile, "read = [\"/usr\"]\nhosts = [\"a b\"]\n").unwrap();
    let output = run({
        let mut command = sandbox_check();
        command
            .arg("--policy")
            .arg(&profile)
            .args(["--", "/usr/bin/true"]);
        command
    });
    assert_eq!(output.status.code(), Some(64), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("hosts: \"a b\": is not a host name or an address"),
        "{stderr}"
    );
}

/// The library, with `sandbox-check` executed as the launcher (the request on its command line,
/// the log's descriptor inherited): `Finished::hosts` names the destinations, the program reads
/// the allowed one, and the log has both decisions.
#[test]
fn the_library_reaches_a_host_and_finished_names_it() {
    use sandbox_core::{Policy, RunOptions, Sandbox};
    let (p, q) = (Server::start("from P"), Server::start("from Q"));
    let folder = shared_folder("net-library");
    let log_path = folder.0.join("net.log");
    let log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&log_path)
        .unwrap();
    let policy = Policy::new()
        .allow_read("/usr")
        .unwrap()
        .allow_host(&format!("127.0.0.1:{}", p.port))
        .unwrap()
        .with_net_log(log)
        .unwrap();
    let code = format!(
        "{PRELUDE}\n{NET}\nreport('P', get('http://127.0.0.1:{}/'))\nreport('Q', get('http://127.0.0.1:{}/'))",
        p.port, q.port
    );
    let done = Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")))
        .run(&policy, PYTHON, ["-I", "-c", &code], &RunOptions::new())
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "P=body:from P\nQ=HTTP403\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(done.status.code(), Some(0));
    assert_eq!(
        done.hosts,
        vec![sandbox_core::net::Host::parse(&format!("127.0.0.1:{}", p.port)).unwrap()]
    );
    let decisions: Vec<String> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {}",
                v["decision"].as_str().unwrap(),
                v["destination"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        decisions,
        vec![
            format!("allowed 127.0.0.1:{}", p.port),
            format!("refused 127.0.0.1:{}", q.port)
        ]
    );
    assert_eq!(q.taken(), 0);
}

/// With `--processes` too, a child the program starts reaches the host through the same proxy
/// (the variables are inherited), and the launch's PID namespace is made inside its network.
#[test]
fn a_child_of_the_program_reaches_the_host_with_processes() {
    for user in users() {
        let (p, q) = (Server::start("from P"), Server::start("from Q"));
        let code = r#"
import subprocess
P, Q = int(sys.argv[1]), int(sys.argv[2])
child = NET + f"\nreport('child P', get('http://127.0.0.1:{P}/'))\nreport('child Q', get('http://127.0.0.1:{Q}/'))"
subprocess.run([sys.executable, "-I", "-c", PRELUDE + child], check=True)
"#;
        let code = format!("PRELUDE = {PRELUDE:?}\nNET = {NET:?}\n{code}");
        let flags = vec![
            "--processes".to_owned(),
            "--exec=/usr/bin".to_owned(),
            format!("--allow-host=127.0.0.1:{}", p.port),
        ];
        let output = confined(
            user,
            &flags,
            &[],
            &code,
            &[p.port.to_string(), q.port.to_string()],
        );
        assert_results(
            &results(&output),
            &[("child P", "body:from P"), ("child Q", "HTTP403")],
        );
        assert_eq!(q.taken(), 0);
    }
}

/// `run` of a confined `python3 -I` reading `urls` in turn, each line `N=RESULT`, through the
/// library with `sandbox` and a launcher executed (as any launch with a function is), logging
/// the proxy's decisions; the output and the log's lines (`decision destination [by] [reason]`).
fn run_deciding(
    name: &str,
    sandbox: sandbox_core::Sandbox<'_>,
    listed: u16,
    max: u32,
    urls: &[String],
) -> (sandbox_core::Finished, Vec<String>) {
    let folder = shared_folder(name);
    let log_path = folder.0.join("net.log");
    let log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&log_path)
        .unwrap();
    let policy = sandbox_core::Policy::new()
        .allow_read("/usr")
        .unwrap()
        .allow_host(&format!("127.0.0.1:{listed}"))
        .unwrap()
        .with_max_connections(max)
        .with_net_log(log)
        .unwrap();
    let mut code = format!("{PRELUDE}\n{NET}\n");
    for (n, url) in urls.iter().enumerate() {
        code.push_str(&format!("report({n}, get({url:?}))\n"));
    }
    // The question socket is the proxy's: the program holds no descriptor but its streams.
    code.push_str(
        "def held(fd):\n    try:\n        os.fstat(fd)\n        return True\n    except OSError:\n        return False\nreport('held', [fd for fd in range(3, 1024) if held(fd)])\n",
    );
    let done = sandbox
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")))
        .run(
            &policy,
            PYTHON,
            ["-I", "-c", &code],
            &sandbox_core::RunOptions::new(),
        )
        .unwrap();
    let decisions = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let mut line = format!(
                "{} {}",
                v["decision"].as_str().unwrap(),
                v["destination"].as_str().unwrap()
            );
            for key in ["by", "reason"] {
                if let Some(value) = v[key].as_str() {
                    line.push_str(&format!(" [{value}]"));
                }
            }
            line
        })
        .collect();
    (done, decisions)
}

/// `Sandbox::on_connect`: the list is consulted first (the function is never asked about a
/// destination on it); the function allows P, which the program reads, and refuses Q, which it
/// gets `403` for; it saw both; an allowed destination is logged as the function's and counted
/// against `--max-connections` (the fourth request, past a bound of 3, is refused unasked).
#[test]
fn the_applications_function_decides_destinations_off_the_list() {
    use sandbox_core::net::decider::{Connect, ConnectRequest};
    let (listed, p, q) = (
        Server::start("from L"),
        Server::start("from P"),
        Server::start("from Q"),
    );
    let seen = Arc::new(std::sync::Mutex::new(Vec::<ConnectRequest>::new()));
    let asked = Arc::clone(&seen);
    let allowed = p.port;
    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend).on_connect(
        move |request: &ConnectRequest| {
            asked.lock().unwrap().push(request.clone());
            if request.address == Some([127, 0, 0, 1].into()) && request.port == allowed {
                Connect::Allow
            } else {
                Connect::Refuse
            }
        },
    );
    let url = |port: u16| format!("http://127.0.0.1:{port}/");
    let (done, decisions) = run_deciding(
        "net-decider",
        sandbox,
        listed.port,
        3,
        &[url(listed.port), url(p.port), url(q.port), url(p.port)],
    );
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "0=body:from L\n1=body:from P\n2=HTTP403\n3=HTTP429\nheld=[]\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(done.status.code(), Some(0));
    let seen: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| format!("{}:{}", r.host, r.port))
        .collect();
    assert_eq!(
        seen,
        vec![
            format!("127.0.0.1:{}", p.port),
            format!("127.0.0.1:{}", q.port)
        ]
    );
    assert_eq!(
        decisions,
        vec![
            format!("allowed 127.0.0.1:{}", listed.port),
            format!("allowed 127.0.0.1:{} [on_connect]", p.port),
            format!(
                "refused 127.0.0.1:{} [refused by the application's function (on_connect)]",
                q.port
            ),
            format!(
                "refused 127.0.0.1:{} [the launch has had its 3 connections (--max-connections)]",
                p.port
            ),
        ]
    );
    assert_eq!((listed.taken(), p.taken(), q.taken()), (1, 1, 0));
}

/// A function that panics, or does not answer within the deadline, refuses that destination
/// and every later one off the list, unasked, and the launch goes on (no hang); the list still
/// works.
#[test]
fn a_function_that_panics_or_blocks_refuses_and_nothing_hangs() {
    use sandbox_core::net::decider::{Connect, ConnectRequest, DEADLINE};
    let (listed, p) = (Server::start("from L"), Server::start("from P"));
    let url = |port: u16| format!("http://127.0.0.1:{port}/");
    let no_answer = "the application's function (on_connect) did not answer within 10 s, or failed";
    assert_eq!(DEADLINE.as_secs(), 10);
    // Panics.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend).on_connect(
        move |_: &ConnectRequest| -> Connect {
            counted.fetch_add(1, Ordering::SeqCst);
            panic!("a function that fails")
        },
    );
    let (done, decisions) = run_deciding(
        "net-decider-fails",
        sandbox,
        listed.port,
        10,
        &[url(p.port), url(p.port), url(listed.port)],
    );
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "0=HTTP403\n1=HTTP403\n2=body:from L\nheld=[]\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        decisions,
        vec![
            format!(
                "refused 127.0.0.1:{} [refused by the application's function (on_connect)]",
                p.port
            ),
            format!("refused 127.0.0.1:{} [{no_answer}]", p.port),
            format!("allowed 127.0.0.1:{}", listed.port),
        ]
    );
    // Blocks until the test ends (the sender dropped below).
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(wait);
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend).on_connect(
        move |_: &ConnectRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = wait.lock().unwrap().recv();
            Connect::Allow
        },
    );
    let started = std::time::Instant::now();
    let (done, decisions) = run_deciding(
        "net-decider-fails",
        sandbox,
        listed.port,
        10,
        &[url(p.port), url(p.port), url(listed.port)],
    );
    let took = started.elapsed();
    drop(release);
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "0=HTTP403\n1=HTTP403\n2=body:from L\nheld=[]\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(took >= DEADLINE, "{took:?}");
    assert_eq!(
        decisions,
        vec![
            format!("refused 127.0.0.1:{} [{no_answer}]", p.port),
            format!("refused 127.0.0.1:{} [{no_answer}]", p.port),
            format!("allowed 127.0.0.1:{}", listed.port),
        ]
    );
    assert_eq!(p.taken(), 0);
}
