//! One launch's explanation: what was refused, in the order seen, and its likeliest cause.

use std::path::Path;

use super::refusal::{file_sentence, CallRefusal, FileRefusal, PathRight, Rule};
use super::routine::{ROUTINE_CALLS, ROUTINE_FILES};
use crate::remedy::Remedy;

/// How the program ended, as far as an explanation tells success from failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It exited 0: it went on past every refusal, and none was where it failed.
    Succeeded,
    /// It exited otherwise or was killed: the last refusal that is not routine
    /// ([`Explanation::cause`]) is the likeliest cause.
    Failed,
}

/// Something the program was refused that no policy allows, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Never {
    /// What: `create in /tmp`, `socket`.
    pub what: String,
    /// Why no policy allows it.
    pub why: String,
}

/// How much of the program the backend saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seen {
    /// Every call of the program, from its start to its end.
    Everything,
    /// Nothing: the system did not let this process watch the program (a security module
    /// refusing `PTRACE_TRACEME`). The program ran confined as usual.
    NotTraced,
    /// The launcher ended before it executed the program (a refused launch): there were no
    /// calls of the program to see.
    NoProgram,
    /// The program was watched, but some of its system calls could not be read: what they were
    /// refused may be missing.
    NotEveryCall,
}

/// What the sandbox refused a program, with what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explanation {
    /// How much was seen.
    pub seen: Seen,
    /// Refused file accesses, in the order first seen.
    pub files: Vec<FileRefusal>,
    /// Refused system calls, in the order first seen.
    pub calls: Vec<CallRefusal>,
    /// Refused file accesses past the first [`MAX_DISTINCT`] distinct ones, only counted: the
    /// program chooses the paths, and the unconfined watcher must not grow without end.
    pub more_files: u64,
    /// The refusal seen last, of all, routine ones included.
    pub last: Option<Last>,
    /// The refusal seen last that is not routine (neither a file of [`ROUTINE_FILES`] nor a
    /// call of [`ROUTINE_CALLS`]): where the program failed, the likeliest cause (it went on
    /// from the ones before). See [`Explanation::likeliest_cause`].
    pub cause: Option<Last>,
    /// How the program ended, where the backend knows it: `None` for an explanation built by
    /// hand.
    pub outcome: Option<Outcome>,
    /// The launch's write folders ([`Policy::allow_write`](crate::Policy::allow_write)): a write
    /// refused beneath one is not one the write opt-in would allow.
    pub write_folders: Vec<std::path::PathBuf>,
}

/// Which refusal came last: an index into [`Explanation::files`] or [`Explanation::calls`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Last {
    /// `files[i]`.
    File(usize),
    /// `calls[i]`.
    Call(usize),
}

/// The most distinct refused file accesses (and calls) an explanation keeps.
pub const MAX_DISTINCT: usize = 256;

impl Explanation {
    /// An empty explanation of a run seen as `seen`.
    pub fn new(seen: Seen) -> Self {
        Self {
            seen,
            files: Vec::new(),
            calls: Vec::new(),
            more_files: 0,
            last: None,
            cause: None,
            outcome: None,
            write_folders: Vec::new(),
        }
    }

    /// Whether `file` is one a runtime looks for and goes on without ([`ROUTINE_FILES`]).
    pub fn is_routine(file: &FileRefusal) -> bool {
        ROUTINE_FILES
            .iter()
            .any(|routine| file.access.resolved == Path::new(routine))
    }

    /// Whether `call` is one a runtime goes on without ([`CallRefusal::routine`]).
    pub fn is_routine_call(call: &CallRefusal) -> bool {
        call.routine
    }

    /// The likeliest cause of a failure: the last refusal that is not routine
    /// ([`Explanation::cause`]). `None` when the program succeeded (it failed nowhere), or when
    /// nothing but routine lookups was refused.
    pub fn likeliest_cause(&self) -> Option<Last> {
        if self.outcome == Some(Outcome::Succeeded) {
            return None;
        }
        self.cause
    }

    /// The likeliest cause ([`Explanation::likeliest_cause`]) as a sentence (see
    /// [`Explanation::sentences`]): never a routine lookup, and `None` when the program
    /// succeeded.
    pub fn last_sentence(&self) -> Option<String> {
        match self.likeliest_cause()? {
            Last::File(i) => self.files.get(i).map(file_sentence),
            Last::Call(i) => self
                .calls
                .get(i)
                .map(|c| format!("the system call {} was refused", c.name)),
        }
    }

    /// Whether nothing was refused.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.calls.is_empty()
    }

    /// Counts a refused access.
    pub fn add_file(&mut self, access: PathRight, call: &str) {
        let full = self.files.len() >= MAX_DISTINCT;
        let at = match self.files.iter().position(|f| f.access == access) {
            Some(at) => {
                self.files[at].count += 1;
                at
            }
            None if full => {
                self.more_files += 1;
                return;
            }
            None => {
                self.files.push(FileRefusal {
                    access,
                    call: call.to_owned(),
                    count: 1,
                });
                self.files.len() - 1
            }
        };
        self.last = Some(Last::File(at));
        if !Self::is_routine(&self.files[at]) {
            self.cause = Some(Last::File(at));
        }
    }

    /// Counts a refused call, once for each time it is added; routine if it is one of
    /// [`ROUTINE_CALLS`].
    pub fn add_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        let routine = ROUTINE_CALLS.contains(&name.as_str());
        self.add_call_as(name, answer, rules, routine);
    }

    /// Counts a refused call the backend knows to be routine ([`CallRefusal::routine`]).
    pub fn add_routine_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        self.add_call_as(name, answer, rules, true);
    }

    fn add_call_as(&mut self, name: String, answer: String, rules: Vec<Rule>, routine: bool) {
        let full = self.calls.len() >= MAX_DISTINCT;
        let at = match self.calls.iter().position(|c| {
            c.name == name && c.answer == answer && c.rules == rules && c.routine == routine
        }) {
            Some(at) => {
                self.calls[at].count += 1;
                at
            }
            None if full => return,
            None => {
                self.calls.push(CallRefusal {
                    name,
                    answer,
                    rules,
                    count: 1,
                    routine,
                });
                self.calls.len() - 1
            }
        };
        self.last = Some(Last::Call(at));
        if !Self::is_routine_call(&self.calls[at]) {
            self.cause = Some(Last::Call(at));
        }
    }

    /// Each refusal as a sentence for a user, in the order seen: `reading /etc/ssl/openssl.cnf
    /// was refused`, `the system call socket was refused`. Paths are [`shown`](super::paths::shown).
    pub fn sentences(&self) -> Vec<String> {
        let files = self.files.iter().map(file_sentence);
        let calls = self
            .calls
            .iter()
            .map(|c| format!("the system call {} was refused", c.name));
        files.chain(calls).collect()
    }

    /// The grants suggested: [`Explanation::learnt`] with nothing kept clear and no routine
    /// file. What the command line prints and what `--suggest` writes come from `learnt`, so
    /// they say the same thing.
    pub fn grants(&self) -> Vec<Remedy> {
        self.learnt(&[]).grants
    }
}
