//! An explanation as lines for a person.

use std::fmt;
use std::path::Path;

use super::explanation::{Explanation, Outcome, Seen, MAX_DISTINCT};
use super::paths::shown;
use super::remedy::{Because, Learnt};

/// An explanation as lines for a person ([`Explanation::report`]).
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    explanation: &'a Explanation,
    keep_clear: &'a [&'a Path],
    routine: bool,
}

impl Explanation {
    /// The explanation as lines starting `explain: `, for standard error, with the suggestion
    /// of [`Explanation::learnt`] for `keep_clear` (or, where `routine`, of
    /// [`Explanation::learnt_all`], and the routine lookups listed one by one). `Display` is
    /// this with nothing kept clear and the routine lookups counted.
    pub fn report<'a>(&'a self, keep_clear: &'a [&'a Path], routine: bool) -> Report<'a> {
        Report {
            explanation: self,
            keep_clear,
            routine,
        }
    }

    /// What the report suggests: [`Explanation::learnt`] or, where `routine`,
    /// [`Explanation::learnt_all`].
    pub fn suggestion(&self, keep_clear: &[&Path], routine: bool) -> Learnt {
        self.learn(keep_clear, routine)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = self.explanation;
        match this.seen {
            Seen::NotTraced => writeln!(
                f,
                "explain: nothing could be seen: the kernel refused to let this process trace the \
                 program (PTRACE_TRACEME); it ran confined as usual"
            )?,
            Seen::NoProgram => writeln!(
                f,
                "explain: the launcher ended before it started the program, so there was nothing \
                 to see; its `sandbox: refused:` line says why"
            )?,
            Seen::NotEveryCall => writeln!(
                f,
                "explain: some system calls could not be read (PTRACE_GET_SYSCALL_INFO failed), \
                 so what they were refused is missing below"
            )?,
            Seen::Everything if this.is_empty() => writeln!(f, "explain: nothing was refused")?,
            Seen::Everything => {}
        }
        let mut routine = Vec::new();
        for file in &this.files {
            if !self.routine && Explanation::is_routine(file) {
                routine.push(shown(&file.access.resolved));
                continue;
            }
            let a = &file.access;
            write!(f, "explain: refused {} of {}", a.right, shown(&a.named))?;
            if a.resolved != a.named {
                write!(f, " (resolved: {})", shown(&a.resolved))?;
            }
            writeln!(f, " by {}, {} time(s)", file.call, file.count)?;
        }
        if this.more_files > 0 {
            writeln!(
                f,
                "explain: {} more refused file accesses, past the first {MAX_DISTINCT}, not listed",
                this.more_files
            )?;
        }
        for call in &this.calls {
            let rules: Vec<&str> = call.rules.iter().map(|r| r.rule.as_str()).collect();
            writeln!(
                f,
                "explain: refused call {} ({}) by the rule {}, {} time(s)",
                call.name,
                call.answer,
                rules.join(" or "),
                call.count
            )?;
        }
        if !routine.is_empty() {
            writeln!(
                f,
                "explain: {} routine lookup(s) refused, which most programs go on without, \
                 neither listed nor suggested (--explain=all does both): {}",
                routine.len(),
                routine.join(", ")
            )?;
        }
        match (this.outcome, this.last_sentence()) {
            (Some(Outcome::Succeeded), _) if !this.is_empty() => writeln!(
                f,
                "explain: the program exited 0: it went on past every refusal, and none was \
                 where it failed"
            )?,
            (_, Some(cause)) => writeln!(
                f,
                "explain: the likeliest cause: {cause} (the last refusal that is not routine; \
                 the program went on from the ones before it)"
            )?,
            (Some(Outcome::Failed), None) if !this.is_empty() => writeln!(
                f,
                "explain: the program failed, and nothing but routine lookups was refused it: \
                 if it needed one of them, --explain=all lists and suggests them"
            )?,
            _ => {}
        }
        let learnt = this.learn(self.keep_clear, self.routine);
        for grant in &learnt.grants {
            writeln!(f, "explain: a policy can allow: {grant}")?;
        }
        for withheld in &learnt.withheld {
            if withheld.because != Because::Routine {
                writeln!(
                    f,
                    "explain: not suggested: {}: {}",
                    shown(withheld.grant.path()),
                    withheld.because
                )?;
            }
        }
        let (never, opt_ins) = this.sorted(self.keep_clear);
        for never in never {
            writeln!(
                f,
                "explain: no policy allows: {}: {}",
                never.what, never.why
            )?;
        }
        for allows in opt_ins {
            writeln!(
                f,
                "explain: an opt-in allows: {}: {}; {} (an opt-in only the application names: never suggested)",
                allows.what, allows.why, allows.opt_in
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Explanation {
    /// The explanation as lines starting `explain: `, for standard error
    /// ([`Explanation::report`] with nothing kept clear and the routine lookups counted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.report(&[], false).fmt(f)
    }
}
