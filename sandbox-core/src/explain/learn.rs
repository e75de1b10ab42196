//! What a run teaches: the smallest grants that allow what a policy can allow, what is withheld
//! and why, and what no policy allows.

use std::path::{Path, PathBuf};

use super::explanation::{Explanation, Last, Never, Outcome};
use super::paths::{is_process_folder, is_secret, shown, too_wide};
use super::refusal::{PathRight, Right};
use super::remedy::{Because, Learnt, OptIn, OptInAllows, Withheld};
use crate::remedy::Remedy;

/// Why no path grants writing, and what does instead: a scratch folder, for the CLI and for
/// the library alike.
pub(super) const WRITING: &str =
    "a confined program writes no file but /dev/null, its own scratch \
                       folder and the write folders the application names, and creates, removes \
                       and renames none elsewhere; no path grants it, and this folder may be no \
                       write folder (/, a top-level or system folder, the home folder, or one \
                       holding the canary or the temporary folder): give it a scratch folder as \
                       its TMPDIR (sandbox-check --scratch, Command::scratch, \
                       Policy::with_scratch) or a folder of its own to write (--write, \
                       Policy::allow_write), or hand data back through the standard streams";
/// Why a write was refused in a folder that could be a write folder: the default, which the
/// write opt-in widens.
const WRITING_DEFAULT: &str = "a confined program writes no file but /dev/null, its scratch \
                               folder and the write folders the application names";
/// Why nothing grants device ioctls.
const IOCTL: &str = "Landlock's device-ioctl right is granted on no path; no flag grants it";
/// Why no flag allows a call the table refuses.
const TABLE: &str = "the refusal table applies to every launch; no flag changes it";

impl Explanation {
    /// The grants a profile learnt from this run adds, printed as `sandbox-check --explain`'s
    /// suggestion and written by `--suggest`: the smallest that allow every refused access a
    /// policy can allow, and never more than what was asked. Routine files ([`ROUTINE_FILES`](super::routine::ROUTINE_FILES))
    /// are withheld; [`Explanation::learnt_all`] suggests them too.
    ///
    /// - A file read is granted as that file, and as its folder only where the program read two
    ///   entries of it or more, none of them a secret, and the folder is not `/`, a top-level
    ///   folder, or in `/proc` or `/sys` ([`Because::TooWide`]); a program executed as the
    ///   program.
    /// - A folder only listed is withheld ([`Because::Listed`]): a read grant of it would give
    ///   every file beneath. The files the program then read are suggested as files.
    /// - A path that looks like a secret ([`is_secret`]) is withheld ([`Because::Secret`]).
    /// - Nothing that covers a path of `keep_clear` as a whole ([`Because::Covers`]): the
    ///   application passes the canary, the temporary folder and the user's home, whose grant
    ///   would defeat the enforcement check or hand over every file the user has. A folder that
    ///   would cover one is suggested as its files instead.
    /// - Where the program failed ([`Outcome::Failed`]) at a refusal the grants do not allow
    ///   (a call the table refuses, a write, a withheld path), every grant is withheld
    ///   ([`Because::NotTheCause`]): none would get it past where it failed.
    ///
    /// What the program named is its choice: the caller must treat every path here as the
    /// program's request, which is why the rules are on the result and not on what was asked.
    pub fn learnt(&self, keep_clear: &[&Path]) -> Learnt {
        self.learn(keep_clear, false)
    }

    /// [`Explanation::learnt`] with the routine files suggested too (`--explain=all`).
    pub fn learnt_all(&self, keep_clear: &[&Path]) -> Learnt {
        self.learn(keep_clear, true)
    }

    pub(super) fn learn(&self, keep_clear: &[&Path], routine: bool) -> Learnt {
        let covers = |grant: &Path| keep_clear.iter().find(|kept| kept.starts_with(grant));
        let mut by_folder: std::collections::BTreeMap<&Path, Vec<&Path>> = Default::default();
        let mut grants = Vec::new();
        let mut withheld = Vec::new();
        let mut withhold =
            |grant: Remedy, because: Because| withheld.push(Withheld { grant, because });
        for file in &self.files {
            let resolved = file.access.resolved.as_path();
            if !routine && Self::is_routine(file) {
                withhold(Remedy::Read(resolved.to_path_buf()), Because::Routine);
                continue;
            }
            match file.access.right {
                Right::Read => match resolved.parent() {
                    Some(folder) => {
                        let files = by_folder.entry(folder).or_default();
                        if !files.contains(&resolved) {
                            files.push(resolved);
                        }
                    }
                    None => grants.push(Remedy::Read(resolved.to_path_buf())),
                },
                Right::List => withhold(Remedy::Read(resolved.to_path_buf()), Because::Listed),
                Right::Execute => grants.push(Remedy::Exec(resolved.to_path_buf())),
                _ => {}
            }
        }
        for (folder, files) in by_folder {
            // Two files of a folder too wide to grant: the folder is named, its files suggested.
            if files.len() >= 2 && too_wide(folder) {
                withhold(Remedy::Read(folder.to_path_buf()), Because::TooWide);
            }
            let whole = files.len() >= 2
                && !too_wide(folder)
                && covers(folder).is_none()
                && !files.iter().any(|file| is_secret(file));
            if whole {
                grants.push(Remedy::Read(folder.to_path_buf()));
            } else {
                grants.extend(files.into_iter().map(|f| Remedy::Read(f.to_path_buf())));
            }
        }
        grants.retain(|g| {
            let printable = g
                .path()
                .to_str()
                .is_some_and(|text| !text.chars().any(char::is_control));
            let because = if !printable || is_process_folder(g.path()) {
                Because::NotAPath
            } else if is_secret(g.path()) {
                Because::Secret
            } else if g.path().components().count() <= 1 {
                Because::TooWide
            } else if let Some(kept) = covers(g.path()) {
                Because::Covers(kept.to_path_buf())
            } else {
                return true;
            };
            withhold(g.clone(), because);
            false
        });
        grants.sort();
        grants.dedup();
        let all = grants.clone();
        grants.retain(|g| {
            !all.iter().any(|other| {
                other != g && other.flag() == g.flag() && g.path().starts_with(other.path())
            })
        });
        // Where the program failed, grants that do not allow where it failed would not get it
        // past it: suggesting them would widen the policy for nothing.
        if self.outcome == Some(Outcome::Failed) && !grants.is_empty() {
            let allowed = |access: &PathRight| {
                grants.iter().any(|g| match (g, access.right) {
                    (Remedy::Read(path), Right::Read) => access.resolved.starts_with(path),
                    (Remedy::Exec(path), Right::Execute) => access.resolved == *path,
                    _ => false,
                })
            };
            let gets_past = match self.likeliest_cause() {
                Some(Last::File(i)) => self.files.get(i).is_some_and(|f| allowed(&f.access)),
                Some(Last::Call(_)) => false,
                None => true,
            };
            if !gets_past {
                for grant in grants.drain(..) {
                    withhold(grant, Because::NotTheCause);
                }
            }
        }
        withheld.sort();
        withheld.dedup();
        Learnt { grants, withheld }
    }

    /// What was refused that no policy allows, and why, each once: writing, creating and
    /// removing by folder, and every call the refusal table refused; less what an opt-in would
    /// allow ([`Explanation::opt_ins`]). [`Explanation::never_beside`] with nothing kept clear.
    pub fn never(&self) -> Vec<Never> {
        self.never_beside(&[])
    }

    /// What an opt-in the application names would allow, each once: a call whose rows the
    /// opt-in lifts (`clone` of a process: `--processes`), and a write refused in a folder that
    /// may be a write folder (`--write FOLDER`): none at or beneath one of the launch's write
    /// folders (the write opt-in does not allow what was refused there), none that is `/`, a
    /// top-level or system folder, the home folder, a secret or a process's folder, and none
    /// that covers a path of `keep_clear` (the canary, the temporary folder). Never suggested:
    /// [`Explanation::learnt`] adds no opt-in.
    pub fn opt_ins(&self, keep_clear: &[&Path]) -> Vec<OptInAllows> {
        self.sorted(keep_clear).1
    }

    /// [`Explanation::never`], where a write in a folder covering a path of `keep_clear` is one
    /// no policy allows rather than one a write folder would ([`Explanation::opt_ins`]).
    pub fn never_beside(&self, keep_clear: &[&Path]) -> Vec<Never> {
        self.sorted(keep_clear).0
    }

    /// What no policy allows and what an opt-in would.
    pub(super) fn sorted(&self, keep_clear: &[&Path]) -> (Vec<Never>, Vec<OptInAllows>) {
        let mut never: Vec<Never> = Vec::new();
        let mut opt_ins: Vec<OptInAllows> = Vec::new();
        let mut push = |what: String, why: String| {
            if !never.iter().any(|n| n.what == what) {
                never.push(Never { what, why });
            }
        };
        let mut allow = |what: String, why: String, opt_in: OptIn| {
            if !opt_ins.iter().any(|o| o.what == what) {
                opt_ins.push(OptInAllows { what, why, opt_in });
            }
        };
        for file in &self.files {
            let right = file.access.right;
            if right.grantable() {
                continue;
            }
            let resolved = &file.access.resolved;
            let folder = resolved.parent().unwrap_or(resolved);
            if right != Right::Ioctl {
                let what = format!("{right} in {}", shown(folder));
                if let Some(write) = self.write_folders.iter().find(|w| folder.starts_with(w)) {
                    push(
                        what,
                        format!(
                            "beneath the write folder {} the program makes, writes and removes \
                             files, folders and links, but no device, socket or FIFO node, and \
                             nothing across its edge; no flag allows more",
                            shown(write)
                        ),
                    );
                    continue;
                }
                if may_be_write_folder(folder, keep_clear) {
                    allow(
                        what,
                        WRITING_DEFAULT.to_owned(),
                        OptIn::Write(folder.to_path_buf()),
                    );
                    continue;
                }
            }
            let what = match right {
                Right::Ioctl => format!("ioctl on {}", shown(resolved)),
                _ => format!(
                    "{right} in {}",
                    shown(resolved.parent().unwrap_or(resolved))
                ),
            };
            let why = if right == Right::Ioctl {
                IOCTL
            } else {
                WRITING
            };
            push(what, why.to_owned());
        }
        for call in &self.calls {
            let reasons: Vec<&str> = call.rules.iter().map(|r| r.reason.as_str()).collect();
            let why = reasons.join("; or ");
            // Only where every row that may have refused it is one the same opt-in lifts.
            let lifted = call.rules.first().and_then(|first| {
                let opt_in = first.opt_in.clone()?;
                call.rules
                    .iter()
                    .all(|r| r.opt_in.as_ref() == Some(&opt_in))
                    .then_some(opt_in)
            });
            match lifted {
                Some(opt_in) => allow(call.name.clone(), why, opt_in),
                None => push(call.name.clone(), format!("{why}; {TABLE}")),
            }
        }
        (never, opt_ins)
    }
}

/// Whether a write refused in `folder` is one a write folder there would allow, judged by the
/// name alone (the explainer runs unconfined for the program and looks nothing up): not `/`, a
/// top-level or system folder ([`crate::opt_in::refused_by_name`]), the home folder, a secret,
/// a folder of `/proc` or `/sys`, nor one that covers a path of `keep_clear`.
fn may_be_write_folder(folder: &Path, keep_clear: &[&Path]) -> bool {
    let printable = folder
        .to_str()
        .is_some_and(|text| !text.chars().any(char::is_control));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    printable
        && folder.is_absolute()
        && crate::opt_in::write_path::refused_by_name(folder).is_none()
        && home.as_deref() != Some(folder)
        && !is_secret(folder)
        && !too_wide(folder)
        && !keep_clear.iter().any(|kept| kept.starts_with(folder))
}
