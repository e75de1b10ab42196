//! Deciding whether a failed call was the sandbox's refusal, and whose.
//!
//! A call fails for many reasons; only these are reported:
//!
//! - **seccomp**: the filters the launcher installed, rebuilt here for the program's process ID
//!   and run by the evaluator ([`crate::eval::Stack::decide`]) on the call's exact number,
//!   architecture and arguments, answer with the very error the call got. The row is then found
//!   in [`RULES`]: the rows of that call in the deciding filter with that answer, and among
//!   several the first whose condition holds for the arguments.
//! - **Landlock**: a call that names a path failed with `EACCES`, and the grants the launcher
//!   gave ([`Grants::for_policy`]) do not hold the right it needed there. When they do, the
//!   refusal came from the file's own permissions, not from the sandbox.

use crate::eval::{Action, SeccompData, Stack};
use crate::filter::{Arch, OptIns, Program};
use crate::landlock::Grants;
use crate::rules::{Calls, Condition, OptIn, Rule, RULES};

use super::trace::Entry;
use sandbox_core::explain::Right;

/// `__X32_SYSCALL_BIT`.
const X32_SYSCALL_BIT: u64 = 0x4000_0000;

/// The filters as the kernel runs them for the program.
#[derive(Debug)]
pub struct Seccomp {
    arch: Arch,
    pid: u32,
    opt_ins: OptIns,
    programs: Vec<Program>,
    stack: Stack,
}

/// A call the filters refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The call's name, or what stands for it (`number 500`, `x32 call 1073741825`).
    pub name: String,
    /// The rows that refused it: one, unless the arguments cannot tell which (a condition this
    /// version does not read).
    pub rules: Vec<&'static Rule>,
    /// The answer: `EPERM`, `ENOSYS`, or `killed`.
    pub answer: String,
}

impl Seccomp {
    /// The filters for `arch` that a launcher of process ID `pid` installs.
    #[cfg(test)]
    pub fn new(arch: Arch, pid: u32) -> Result<Self, super::error::ExplainError> {
        Self::with(arch, pid, OptIns::NONE)
    }

    /// The filters for `arch` that a launcher of process ID `pid` installs for a policy that
    /// opts in to `opt_ins`.
    pub fn with(arch: Arch, pid: u32, opt_ins: OptIns) -> Result<Self, super::error::ExplainError> {
        let programs = vec![crate::filter::build_with(arch, pid, opt_ins)?];
        let stack = Stack::of(arch, &programs)?;
        Ok(Self {
            arch,
            pid,
            opt_ins,
            programs,
            stack,
        })
    }

    /// The call's name in reports.
    pub fn name(&self, call: &Entry) -> String {
        if call.arch != self.arch.audit_value() {
            return format!("call {} of architecture {:#x}", call.nr, call.arch);
        }
        if self.arch == Arch::X86_64 && call.nr & X32_SYSCALL_BIT != 0 {
            return format!("x32 call {}", call.nr);
        }
        u32::try_from(call.nr)
            .ok()
            .and_then(|nr| self.arch.name_of(nr))
            .map_or_else(|| format!("number {}", call.nr), str::to_owned)
    }

    /// The refusal, if the filters answer `call` with `errno` (or, when `errno` is `None`, kill
    /// the process for it).
    pub fn refused(&self, call: &Entry, errno: Option<i32>) -> Option<Refused> {
        let data = SeccompData {
            nr: call.nr as u32,
            arch: call.arch,
            instruction_pointer: call.instruction_pointer,
            args: call.args,
        };
        let decision = self.stack.decide(&data);
        let matches = match (decision.action, errno) {
            (Action::Errno(answer), Some(errno)) => i32::from(answer) == errno,
            (Action::KillProcess | Action::KillThread, None) => true,
            _ => false,
        };
        if !matches {
            return None;
        }
        // A refusal no installed program gave (the kernel's own) has no row.
        self.programs.get(decision.filter?)?;
        let calls = |rule: &Rule| {
            if call.arch != self.arch.audit_value() {
                rule.calls == Calls::ForeignArchitecture
            } else if self.arch == Arch::X86_64 && call.nr & X32_SYSCALL_BIT != 0 {
                rule.calls == Calls::X32
            } else {
                match u32::try_from(call.nr)
                    .ok()
                    .and_then(|nr| self.arch.name_of(nr))
                {
                    Some(name) => rule.calls.syscall() == Some(name),
                    None => rule.calls == Calls::Unnamed,
                }
            }
        };
        let answer = |rule: &Rule| match (rule.action, decision.action) {
            (crate::rules::Action::Errno(c), Action::Errno(e)) => c.value == u32::from(e),
            (crate::rules::Action::KillProcess, Action::KillProcess | Action::KillThread) => true,
            _ => false,
        };
        let candidates: Vec<&'static Rule> = RULES
            .iter()
            .filter(|rule| rule.calls.applies_to(self.arch) && calls(rule) && answer(rule))
            .collect();
        let rules = if candidates.len() <= 1 {
            candidates
        } else {
            match candidates
                .iter()
                .find(|rule| holds(&rule.when, &call.args, self.pid, self.opt_ins) == Some(true))
            {
                Some(rule) => vec![*rule],
                None => candidates,
            }
        };
        Some(Refused {
            name: self.name(call),
            rules,
            answer: decision.action.to_string(),
        })
    }
}

/// Whether `condition` refuses a call with `args` from process `pid`, reading each argument's
/// low 32 bits as the filters do; `None` for a condition this version cannot read, and then the
/// report names every candidate row.
#[allow(unreachable_patterns)]
fn holds(condition: &Condition, args: &[u64; 6], pid: u32, opt_ins: OptIns) -> Option<bool> {
    let low = |index: u8| args[usize::from(index)] as u32;
    Some(match *condition {
        Condition::Always => true,
        Condition::FlagClear { arg, flag } => low(arg.index) & flag.value == 0,
        Condition::AnyFlagSet { arg, flags } => flags.iter().any(|f| low(arg.index) & f.value != 0),
        Condition::OtherProcess { arg, zero_allowed } => {
            let value = low(arg.index);
            value != pid && !(zero_allowed && value == 0)
        }
        Condition::OtherProcessOrGroup { arg } => {
            let value = low(arg.index);
            // -1 is every process, never process 1's group (filter.rs writes 1 there).
            value != pid && value != 0 && (pid == 1 || value != pid.wrapping_neg())
        }
        Condition::NotOptedIn {
            opt_in: OptIn::LocalSocketPairs,
        } => !opt_ins.local_socket_pairs,
        Condition::NotOptedIn {
            opt_in: OptIn::ScratchMetadata,
        } => !opt_ins.scratch_metadata,
        Condition::NotOptedIn {
            opt_in: OptIn::Processes,
        } => !opt_ins.processes,
        Condition::NotOptedIn {
            opt_in: OptIn::Network,
        } => !opt_ins.network,
        Condition::UnlessOptedIn { opt_in, when } => {
            holds(&Condition::NotOptedIn { opt_in }, args, pid, opt_ins)?
                && holds(when, args, pid, opt_ins)?
        }
        Condition::OtherProcessBy {
            which,
            process,
            who,
        } => {
            let target = low(who.index);
            low(which.index) != process.value || (target != 0 && target != pid)
        }
        Condition::Command { arg, commands } => commands.iter().any(|c| c.value == low(arg.index)),
        Condition::CommandWith { arg, command, with } => {
            low(arg.index) == command.value && holds(with, args, pid, opt_ins)?
        }
        Condition::Except { arg, allowed } => low(arg.index) != allowed.value,
        // A condition added to the table after this was written.
        _ => return None,
    })
}

/// Whether the grants the launcher gave hold `right` at `resolved`, an absolute path with links
/// resolved: Landlock's rules are on folders and everything beneath them, or on single files.
pub fn granted(grants: &Grants, right: Right, resolved: &std::path::Path) -> bool {
    let beneath = |paths: &[std::path::PathBuf]| paths.iter().any(|p| resolved.starts_with(p));
    match right {
        Right::Read => beneath(&grants.read) || beneath(&grants.exec) || beneath(&grants.write),
        // A rule on a file carries no list right; only folders are listed.
        Right::List => beneath(&grants.read) || beneath(&grants.exec),
        Right::Execute => beneath(&grants.exec),
        Right::Write | Right::Truncate => beneath(&grants.write),
        Right::Create | Right::Remove | Right::Ioctl => false,
    }
}

/// The credentials the kernel checks a thread's file accesses with: its file-system user and
/// group, and its supplementary groups. The launcher drops every capability, so a confined root
/// is checked like any other user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    uid: u32,
    gid: u32,
    groups: Vec<u32>,
}

impl Credentials {
    /// Thread `tid`'s, from `/proc/TID/status`.
    pub fn of(tid: nix::unistd::Pid) -> Option<Self> {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(|rest| {
                    rest.split_whitespace()
                        .filter_map(|n| n.parse::<u32>().ok())
                        .collect::<Vec<u32>>()
                })
        };
        // `Uid:` and `Gid:` list the real, effective, saved and file-system IDs.
        let uid = *field("Uid:")?.get(3)?;
        let gid = *field("Gid:")?.get(3)?;
        let groups = field("Groups:").unwrap_or_default();
        Some(Self { uid, gid, groups })
    }

    /// Whether the folder `meta` describes lets these credentials look up names in it (its
    /// search bit for their class; a confined program holds no capability to override it).
    pub fn may_search(&self, meta: &std::fs::Metadata) -> bool {
        meta.is_dir() && self.bits(meta) & 1 == 1
    }

    /// The permission bits of `meta` that apply to these credentials: the owner's, the group's
    /// or the others', as the kernel picks them.
    fn bits(&self, meta: &std::fs::Metadata) -> u32 {
        use std::os::unix::fs::MetadataExt;
        let mode = meta.mode();
        let class = if meta.uid() == self.uid {
            mode >> 6
        } else if meta.gid() == self.gid || self.groups.contains(&meta.gid()) {
            mode >> 3
        } else {
            mode
        };
        class & 0o7
    }

    /// Whether the files' own permission bits (ACLs aside) let these credentials use `right` at
    /// `resolved`: search on every folder above it, and read (read, list) or execute on it.
    /// When they do not, the kernel refused before Landlock was asked, and no flag would help.
    pub fn allow(&self, right: Right, resolved: &std::path::Path) -> bool {
        let permits = |path: &std::path::Path, bits: u32| {
            let Ok(meta) = std::fs::metadata(path) else {
                return true;
            };
            self.bits(&meta) & bits == bits
        };
        const READ: u32 = 4;
        const SEARCH: u32 = 1;
        let folders_searchable = resolved
            .ancestors()
            .skip(1)
            .all(|folder| permits(folder, SEARCH));
        folders_searchable
            && match right {
                Right::Read | Right::List => permits(resolved, READ),
                Right::Execute => permits(resolved, SEARCH),
                _ => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PID: u32 = 4242;
    const CLONE_THREAD: u64 = libc::CLONE_THREAD as u64;
    const CLONE_NEWUSER: u64 = libc::CLONE_NEWUSER as u64;

    fn call(arch: Arch, name: &str, args: [u64; 6]) -> Entry {
        Entry {
            arch: arch.audit_value(),
            instruction_pointer: 0,
            nr: u64::from(arch.number(name).unwrap()),
            args,
        }
    }

    fn rows(refused: Option<Refused>) -> Vec<String> {
        refused
            .expect("refused")
            .rules
            .iter()
            .map(|r| format!("{} when {}", r.calls, r.when))
            .collect()
    }

    #[test]
    fn the_row_is_the_one_whose_condition_the_arguments_meet() {
        for arch in Arch::ALL {
            let seccomp = Seccomp::new(arch, PID).unwrap();
            let fork = call(arch, "clone", [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]);
            assert_eq!(
                rows(seccomp.refused(&fork, Some(libc::EPERM))),
                ["`clone` when `flags` lacks `CLONE_THREAD`, unless the policy opts in to processes"]
            );
            let thread_in_namespace =
                call(arch, "clone", [CLONE_THREAD | CLONE_NEWUSER, 0, 0, 0, 0, 0]);
            let namespaces = rows(seccomp.refused(&thread_in_namespace, Some(libc::EPERM)));
            assert_eq!(namespaces.len(), 1);
            assert!(namespaces[0].starts_with("`clone` when `flags` has any of"));
            let kill = call(arch, "kill", [1, 0, 0, 0, 0, 0]);
            assert_eq!(
                rows(seccomp.refused(&kill, Some(libc::EPERM))),
                ["`kill` when `pid` is neither 0, the program's own process ID nor its negation \
                  (the program's own group), unless the policy opts in to processes"]
            );
        }
    }

    #[test]
    fn a_failure_the_filters_do_not_answer_is_not_theirs() {
        for arch in Arch::ALL {
            let seccomp = Seccomp::new(arch, PID).unwrap();
            // A thread: allowed, so an EPERM (a limit reached) is the kernel's.
            let thread = call(arch, "clone", [CLONE_THREAD, 0, 0, 0, 0, 0]);
            assert_eq!(seccomp.refused(&thread, Some(libc::EPERM)), None);
            // Its own process: allowed.
            let kill = call(arch, "kill", [u64::from(PID), 0, 0, 0, 0, 0]);
            assert_eq!(seccomp.refused(&kill, Some(libc::EPERM)), None);
            // Refused, but with EPERM, not the EACCES the call got.
            let socket = call(arch, "socket", [1, 2, 0, 0, 0, 0]);
            assert_eq!(seccomp.refused(&socket, Some(libc::EACCES)), None);
            assert!(seccomp.refused(&socket, Some(libc::EPERM)).is_some());
        }
    }

    #[test]
    fn numbers_without_a_name_and_other_architectures_have_their_rows() {
        let seccomp = Seccomp::new(Arch::X86_64, PID).unwrap();
        let unnamed = Entry {
            arch: Arch::X86_64.audit_value(),
            instruction_pointer: 0,
            nr: 1000,
            args: [0; 6],
        };
        let refused = seccomp.refused(&unnamed, Some(libc::ENOSYS)).unwrap();
        assert_eq!(refused.name, "number 1000");
        assert_eq!(refused.rules.len(), 1);
        assert_eq!(refused.rules[0].calls, Calls::Unnamed);

        let x32 = Entry {
            nr: X32_SYSCALL_BIT | 1,
            ..unnamed
        };
        let refused = seccomp.refused(&x32, Some(libc::EPERM)).unwrap();
        assert_eq!(refused.rules[0].calls, Calls::X32);

        let i386 = Entry {
            arch: crate::eval::AUDIT_ARCH_I386,
            nr: 1,
            ..unnamed
        };
        assert_eq!(seccomp.refused(&i386, Some(libc::EPERM)), None);
        let refused = seccomp.refused(&i386, None).unwrap();
        assert_eq!(refused.answer, "killed");
        assert_eq!(refused.rules[0].calls, Calls::ForeignArchitecture);
    }

    #[test]
    fn the_grants_model_follows_the_launchers_rules() {
        use std::path::{Path, PathBuf};
        let grants = Grants {
            read: vec![PathBuf::from("/usr"), PathBuf::from("/etc/ld.so.cache")],
            exec: vec![PathBuf::from("/usr/bin/python3.11")],
            write: vec![PathBuf::from("/dev/null")],
            policy: sandbox_core::Policy::new(),
            loaders: Vec::new(),
            launcher: PathBuf::from("/usr/bin/sandbox-check"),
        };
        let yes = |right, path: &str| granted(&grants, right, Path::new(path));
        assert!(yes(Right::Read, "/usr/lib/x"));
        assert!(yes(Right::List, "/usr/lib"));
        assert!(yes(Right::Read, "/etc/ld.so.cache"));
        assert!(!yes(Right::Read, "/etc/passwd"));
        assert!(!yes(Right::Read, "/usrx"));
        assert!(yes(Right::Execute, "/usr/bin/python3.11"));
        assert!(!yes(Right::Execute, "/usr/bin/env"));
        assert!(yes(Right::Write, "/dev/null"));
        assert!(!yes(Right::Write, "/usr/lib/x"));
        assert!(!yes(Right::Create, "/usr/lib/x"));
        assert!(!yes(Right::Ioctl, "/dev/null"));
    }

    #[test]
    fn the_files_own_permissions_are_read_for_the_threads_credentials() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("sandbox-explain-dac-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        let me = Credentials::of(nix::unistd::getpid()).unwrap();
        let stranger = Credentials {
            uid: 4242,
            gid: 4242,
            groups: Vec::new(),
        };
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(me.allow(Right::Read, &file));
        assert!(!stranger.allow(Right::Read, &file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        assert!(!me.allow(Right::Read, &file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o604)).unwrap();
        assert!(stranger.allow(Right::Read, &file));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(!stranger.allow(Right::Read, &file));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
