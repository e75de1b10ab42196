//! [`LinuxBackend`]: the order in which the layers go on, and what `support` reports.

use std::io;

use sandbox_core::backend::check::{self, Attempt, Context, Expect, Outcome};
use sandbox_core::{
    backend::{BackendError, Fact, Launch, Support},
    Backend,
};

use crate::error::LinuxError;
use crate::filter::{self, Arch};
use crate::landlock::{self as ll, Availability, Grants};

/// Confines the calling process with Landlock and seccomp after dropping every capability.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinuxBackend;

impl LinuxBackend {
    fn arch() -> Result<Arch, LinuxError> {
        Arch::current().ok_or(LinuxError::Architecture {
            arch: std::env::consts::ARCH,
        })
    }

    /// The layers, in order. Everything that can fail without confining anything comes first, so a
    /// refusal leaves no layer half applied; then the capabilities go, then Landlock (which sets
    /// `no_new_privs`, as seccomp needs), then the filters.
    fn apply(launch: &Launch) -> Result<(), LinuxError> {
        let arch = Self::arch()?;
        // First: under a filter that kills, the next call could end the launcher unheard.
        crate::inherited::check(crate::inherited::Needs {
            scratch: launch.request.policy.scratch().is_some(),
            trace: false,
        })?;
        ll::usable_abi()?;
        // The program should not outlive the application that started it.
        crate::sys::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0)
            .map_err(|source| LinuxError::ParentDeath { source })?;
        if nix::unistd::getppid().as_raw().unsigned_abs() != launch.parent {
            return Err(LinuxError::ParentGone);
        }
        // Before the capabilities go, and before a user namespace is joined (whose
        // capabilities do not count for limits): raising a hard limit from 0 to 1 needs one.
        crate::limits::fix()?;
        if let Some(scratch) = launch.request.policy.scratch() {
            crate::namespace::join(&scratch.keeper, &scratch.path)?;
        }
        let grants = Grants::for_policy(&launch.request.policy, &launch.launcher)?;
        ll::check_scratch(&launch.request.policy, &launch.request.canary)?;
        // Before the processes opt-in's namespace: the proxy starts with this process's
        // network, which the launch then leaves (`crate::net`).
        if !launch.request.policy.hosts().is_empty() {
            crate::net::enter(&launch.request.policy)?;
        }
        // Last before confinement: the launch goes on as process 1 of a PID namespace of its
        // own, and this process waits outside it (`sandbox_core::opt_in::processes`).
        if launch.request.policy.processes() {
            crate::workspace::processes(launch.request.policy.limits().tasks)?;
        }
        // A supervised launch with a scratch folder or write folders lets permission and time
        // changes past the table to its supervisor, which makes them only inside those folders.
        let supervised_scratch = launch.request.supervisor.is_some()
            && (launch.request.policy.scratch().is_some()
                || !launch.request.policy.write_paths().is_empty());
        let opt_ins = filter::OptIns::NONE
            .local_socket_pairs(launch.request.policy.local_socket_pairs())
            .scratch_metadata(supervised_scratch)
            .processes(launch.request.policy.processes())
            .network(!launch.request.policy.hosts().is_empty());
        let program = filter::build_with(arch, std::process::id(), opt_ins)?;
        crate::caps::drop_all()?;
        ll::restrict(&grants)?;
        // After Landlock (which set `no_new_privs`) and before the refusal table, which need not
        // allow `seccomp` for it: from here every open waits for the application's supervisor.
        if let Some(channel) = launch.request.supervisor {
            crate::notify::hand_over(channel.as_raw_fd(), arch, launch.request.policy.processes())?;
        }
        filter::install(&program)?;
        Ok(())
    }
}

/// What the Linux backend checks beyond the common list.
pub const LINUX_CHECKS: &[Attempt] = &[Attempt {
    name: "hold no capability",
    expect: Expect::Works,
    run: no_capability,
}];

/// What a launch that names hosts checks beyond the common list, whose connect to port 9 of
/// loopback Landlock's TCP rule refuses (`EACCES`): the proxy is reached, and a UDP socket, which
/// no rule of Landlock's covers, cannot be made.
pub const NETWORK_CHECKS: &[Attempt] = &[
    Attempt {
        name: "connect to the launch's proxy",
        expect: Expect::Works,
        run: connect_proxy,
    },
    Attempt {
        name: "open a UDP socket",
        expect: Expect::Denied,
        run: udp_socket,
    },
];

fn connect_proxy(_: &Context) -> io::Result<()> {
    let port = sandbox_core::net::proxy_port()
        .ok_or_else(|| io::Error::other("the launch made no proxy"))?;
    std::net::TcpStream::connect(("127.0.0.1", port)).map(drop)
}

fn udp_socket(_: &Context) -> io::Result<()> {
    std::net::UdpSocket::bind(("127.0.0.1", 0)).map(drop)
}

fn no_capability(_: &Context) -> io::Result<()> {
    let held = crate::caps::held(crate::caps::last_capability())?;
    if held.sets.effective | held.sets.permitted | held.sets.inheritable | held.ambient != 0 {
        return Err(io::Error::other(format!("capabilities remain: {held:?}")));
    }
    Ok(())
}

impl Backend for LinuxBackend {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn support(&self) -> Support {
        let mut facts = vec![Fact::new("arch", std::env::consts::ARCH)];
        if let Ok(uname) = nix::sys::utsname::uname() {
            facts.push(Fact::new("kernel", uname.release().to_string_lossy()));
        }
        if let Err(e) = Self::arch() {
            return Support::NoBackend {
                facts,
                reason: BackendError::coded(e.code(), e),
            };
        }
        // Before Landlock is asked: an inherited filter could kill this very process for it.
        if let Err(e) = crate::inherited::check(crate::inherited::Needs::default()) {
            facts.push(Fact::new(
                "inherited seccomp filter",
                "refuses what a launch needs",
            ));
            return Support::Unavailable {
                facts,
                reason: {
                    let e = LinuxError::from(e);
                    BackendError::coded(e.code(), e)
                },
            };
        }
        match ll::probe() {
            Ok(Availability::Absent) => facts.push(Fact::new("landlock", "absent")),
            Ok(Availability::Abi(abi)) => {
                facts.push(Fact::new("landlock ABI", abi.to_string()));
                let added = ll::best_effort_rights(abi);
                let added = if added.is_empty() {
                    "none".to_owned()
                } else {
                    added.join(", ")
                };
                facts.push(Fact::new("best-effort rights added", added));
            }
            Err(_) => {}
        }
        facts.push(sandbox_core::backend::bounds_fact());
        match ll::usable_abi() {
            Ok(_) => Support::Supported { facts },
            Err(e) => Support::Unavailable {
                facts,
                reason: BackendError::coded(e.code(), e),
            },
        }
    }

    fn confine(&self, launch: &Launch) -> Result<(), BackendError> {
        Self::apply(launch).map_err(LinuxError::into_backend_error)
    }

    fn verify(&self, context: &Context) -> Vec<Outcome> {
        let mut outcomes = check::run(check::ENFORCEMENT, context);
        if sandbox_core::opt_in::processes::is_init() {
            crate::workspace::as_init(&mut outcomes, context);
        }
        outcomes.extend(check::run(LINUX_CHECKS, context));
        if sandbox_core::net::proxy_port().is_some() {
            outcomes.extend(check::run(NETWORK_CHECKS, context));
        }
        if crate::notify::supervised() {
            outcomes.extend(check::run(&[crate::notify::SUPERVISED], context));
        }
        outcomes
    }

    /// Opens the policy does not allow go to the application (`crate::broker`).
    fn broker(&self) -> Option<&dyn sandbox_core::grant::Broker> {
        Some(&crate::broker::Supervisor)
    }

    /// The parent traces the program (`crate::explain`); the launch is the same.
    fn tracer(
        &self,
        policy: &sandbox_core::Policy,
        program: &std::path::Path,
        launcher: &std::path::Path,
        supervised: bool,
    ) -> Result<Box<dyn sandbox_core::explain::Tracer>, sandbox_core::explain::ExplainError> {
        let explainer = crate::explain::Explainer::for_launcher(policy, program, launcher)
            .map_err(crate::explain::into_core)?
            .supervised(supervised);
        Ok(Box::new(explainer))
    }
}
