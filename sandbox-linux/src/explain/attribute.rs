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
use crate::filter::{Arch, Program};
use crate::landlock::Grants;
use crate::rules::{Calls, Condition, Rule, RULES};

use super::files::Right;
use super::trace::Entry;

/// `__X32_SYSCALL_BIT`.
const X32_SYSCALL_BIT: u64 = 0x4000_0000;

/// The filters as the kernel runs them for the program.
#[derive(Debug)]
pub struct Seccomp {
    arch: Arch,
    pid: u32,
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
    pub fn new(arch: Arch, pid: u32) -> Result<Self, super::ExplainError> {
        let programs = crate::filter::build(arch, pid)?;
        let stack = Stack::of(arch, &programs)?;
        Ok(Self {
            arch,
            pid,
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
        let filter = self.programs.get(decision.filter?)?.filter;
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
            .filter(|rule| {
                rule.calls.applies_to(self.arch)
                    && rule.filters.contains(&filter)
                    && calls(rule)
                    && answer(rule)
            })
            .collect();
        let rules = if candidates.len() <= 1 {
            candidates
        } else {
            match candidates
                .iter()
                .find(|rule| holds(&rule.when, &call.args, self.pid) == Some(true))
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
fn holds(condition: &Condition, args: &[u64; 6], pid: u32) -> Option<bool> {
    let low = |index: u8| args[usize::from(index)] as u32;
    Some(match *condition {
        Condition::Always => true,
        Condition::FlagClear { arg, flag } => low(arg.index) & flag.value == 0,
        Condition::AnyFlagSet { arg, flags } => flags.iter().any(|f| low(arg.index) & f.value != 0),
        Condition::OtherProcess { arg, zero_allowed } => {
            let value = low(arg.index);
            value != pid && !(zero_allowed && value == 0)
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
            low(arg.index) == command.value && holds(with, args, pid)?
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

    /// Whether the files' own permission bits (ACLs aside) let these credentials use `right` at
    /// `resolved`: search on every folder above it, and read (read, list) or execute on it.
    /// When they do not, the kernel refused before Landlock was asked, and no flag would help.
    pub fn allow(&self, right: Right, resolved: &std::path::Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let permits = |path: &std::path::Path, bits: u32| {
            let Ok(meta) = std::fs::metadata(path) else {
                return true;
            };
            let mode = meta.mode();
            let class = if meta.uid() == self.uid {
                mode >> 6
            } else if meta.gid() == self.gid || self.groups.contains(&meta.gid()) {
                mode >> 3
            } else {
                mode
            };
            class & bits == bits
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
