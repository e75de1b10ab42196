//! The network opt-in before confinement ([`Policy::allow_host`](sandbox_core::Policy::allow_host)).
//!
//! The launcher starts the proxy ([`sandbox_core::net::proxy`]) as a process of its own while it
//! still has the application's network, then moves itself into a new network namespace (inside
//! a new user namespace where an ordinary user may not make one alone), brings up its loopback
//! interface, makes a listening TCP socket on `127.0.0.1` there, and hands that socket to the
//! proxy. A socket keeps the namespace it was made in: the program reaches the proxy through it,
//! and the proxy's own connections go out through the application's network. In the new
//! namespace nothing else listens, and the program can neither listen (the seccomp table) nor
//! connect to any other port (Landlock's TCP rule, [`crate::landlock::restrict`]).
//!
//! The proxy is not the program's child: the launcher forks twice, so the program never sees it
//! among its children nor waits for it. It holds only its end of the hand-over socket, the
//! listening socket, the log the application gave, the socket on which it asks the
//! application's function about destinations off the list (`Sandbox::on_connect`), and a pidfd of the launcher, whose end (the
//! program's, after `exec`) ends the proxy.

use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use crate::error::LinuxError;

fn fail(step: &'static str) -> impl FnOnce(std::io::Error) -> LinuxError {
    move |source| LinuxError::Network { step, source }
}

/// Starts the proxy and moves the launcher into a network of its own, where only the proxy is
/// reachable; records the proxy's port for the program's environment and the check.
#[allow(unsafe_code)]
pub fn enter(policy: &sandbox_core::Policy) -> Result<(), LinuxError> {
    let abi = crate::landlock::usable_abi()?;
    if abi < 4 {
        return Err(fail("finding Landlock's TCP rules")(std::io::Error::other(
            format!("this kernel has Landlock ABI {abi}"),
        )));
    }
    let (ours, theirs) = UnixStream::pair().map_err(fail("making the hand-over socket"))?;
    let launcher = std::process::id();
    let log = policy.net_log().map(|fd| fd.as_raw_fd());
    let decider = policy.decider().map(|fd| fd.as_raw_fd());
    // SAFETY: the launcher is single-threaded (checked before confinement), so the child may
    // run any code; it never returns into the launch.
    match unsafe { nix::unistd::fork() }.map_err(|e| fail("starting the proxy")(e.into()))? {
        nix::unistd::ForkResult::Child => {
            drop(ours);
            let config = sandbox_core::net::proxy::Config {
                hosts: policy.hosts().to_vec(),
                max_connections: policy.max_connections(),
                log: None,
                decider: None,
            };
            intermediate(launcher, theirs, log, decider, config)
        }
        nix::unistd::ForkResult::Parent { child } => {
            drop(theirs);
            // The intermediate process exits as soon as the proxy is started.
            let _ignored = nix::sys::wait::waitpid(child, None);
        }
    }
    namespace()?;
    loopback_up().map_err(fail("bringing up the loopback interface"))?;
    let listener =
        TcpListener::bind(("127.0.0.1", 0)).map_err(fail("making the proxy's listening socket"))?;
    let port = listener
        .local_addr()
        .map_err(fail("reading the proxy's port"))?
        .port();
    sandbox_core::backend::send_with_fds(ours.as_fd(), b"L", &[listener.as_raw_fd()])
        .map_err(fail("handing the listening socket to the proxy"))?;
    drop(listener);
    drop(ours);
    sandbox_core::net::set_proxy_port(port);
    Ok(())
}

/// A network namespace of the launch's own: alone where this process may make one, in a user
/// namespace of its own (its IDs mapped to themselves) where it may not.
fn namespace() -> Result<(), LinuxError> {
    use nix::sched::{unshare, CloneFlags};
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    if unshare(CloneFlags::CLONE_NEWNET).is_ok() {
        return Ok(());
    }
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET)
        .map_err(|e| fail("making a user and a network namespace")(e.into()))?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(fail("mapping the user's own IDs"))
    };
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// Sets `lo` up in the new namespace, where it starts down.
#[allow(unsafe_code)]
fn loopback_up() -> std::io::Result<()> {
    let socket = std::net::UdpSocket::bind(("0.0.0.0", 0)).or_else(|_| {
        // Down, the interface has no address to bind to: a socket of any kind does.
        // SAFETY: socket takes no memory; the result is checked before use.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just made and is owned by nothing else.
        Ok(std::net::UdpSocket::from(unsafe {
            OwnedFd::from_raw_fd(fd)
        }))
    })?;
    // SAFETY: an all-zero `ifreq` is a valid value of the plain C struct.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *to = *from as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS fills the `ifreq` it is given, which lives across the call.
    if unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut request) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the union's flags member is the one SIOCGIFFLAGS filled.
    unsafe { request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: SIOCSIFFLAGS reads the `ifreq` it is given.
    if unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS as _, &request) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The first child: leaves the application's streams and every other descriptor behind, takes
/// a pidfd of the launcher, and starts the proxy as its own child, so that the proxy is no
/// child of the program's.
#[allow(unsafe_code)]
fn intermediate(
    launcher: u32,
    hand_over: UnixStream,
    log: Option<RawFd>,
    decider: Option<RawFd>,
    mut config: sandbox_core::net::proxy::Config,
) -> ! {
    let end = |code| -> ! {
        // SAFETY: ending this forked child without running the launcher's exit handlers.
        unsafe { libc::_exit(code) }
    };
    let keep: Vec<RawFd> = [Some(hand_over.as_raw_fd()), log, decider]
        .into_iter()
        .flatten()
        .collect();
    close_all_but(&keep);
    let _ignored = nix::sys::signal::SigSet::empty().thread_set_mask();
    // SAFETY: pidfd_open takes a process ID and flags and reads no memory.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, launcher as libc::pid_t, 0) };
    if pidfd < 0 || nix::unistd::getppid().as_raw() as u32 != launcher {
        end(1);
    }
    // SAFETY: a descriptor just returned, owned by nothing else.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // SAFETY: this process is single-threaded (a fork of the single-threaded launcher).
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {}
        _ => end(0),
    }
    // SAFETY: `log` is the application's log descriptor, which this process alone now holds.
    config.log = log.map(|fd| unsafe { std::fs::File::from_raw_fd(fd) });
    config.decider = decider.map(|fd| {
        // SAFETY: the application's question socket (`Sandbox::on_connect`), this process's
        // copy, owned by nothing else here (the launcher's closes as it executes the program).
        let stream = unsafe { UnixStream::from_raw_fd(fd) };
        sandbox_core::net::decider::Asker::new(stream)
    });
    let Some(listener) = receive(&hand_over) else {
        end(0)
    };
    drop(hand_over);
    if sandbox_core::net::proxy::serve(listener, config).is_err() {
        end(1);
    }
    // The proxy serves until the launcher (the program, once it has executed) ends.
    let mut poll = [nix::poll::PollFd::new(
        std::os::fd::AsFd::as_fd(&pidfd),
        nix::poll::PollFlags::POLLIN,
    )];
    loop {
        match nix::poll::poll(&mut poll, nix::poll::PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            _ => end(0),
        }
    }
}

/// The listening socket the launcher sends, or `None` where it ended first.
fn receive(hand_over: &UnixStream) -> Option<TcpListener> {
    let mut byte = [0u8; 1];
    let (_, fds) = sandbox_core::backend::recv_with_fds(hand_over.as_fd(), &mut byte).ok()?;
    fds.into_iter().next().map(TcpListener::from)
}

/// Puts `/dev/null` on the standard streams (the application's pipes must close when the
/// program ends, whatever the proxy does) and closes every other descriptor but `keep`.
#[allow(unsafe_code)]
fn close_all_but(keep: &[RawFd]) {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard streams, which this process owns.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    let mut keep = keep.to_vec();
    keep.sort_unstable();
    let mut from = 3;
    for &fd in &keep {
        if fd >= from {
            // SAFETY: closing numbers this process will not use again (a fresh fork's).
            unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0) };
            from = fd + 1;
        }
    }
    // SAFETY: as above, every descriptor above the last kept.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0) };
}
