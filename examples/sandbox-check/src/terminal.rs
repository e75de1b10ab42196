//! The user's standard streams, saved before a launch and put back after the program ends; and
//! the terminal `--ask` puts its questions on ([`Console`]), which the program cannot draw over.
//!
//! The program inherits this process's standard streams, and with them their open file
//! descriptions, which the user's shell shares: a program that sets `O_NONBLOCK` on a terminal
//! leaves the shell's next read failing with `EAGAIN`. The status flags of each stream are saved
//! here and set back when the program ends or stops, whatever ended it. On a terminal, its modes
//! (termios) are put back too, but only when this process was the terminal's foreground job at
//! the start and still is: modes set from the background would undo what the shell set for
//! itself.
//!
//! The foreground process group is recorded, not restored: the program runs in a session of its
//! own, and `tcsetpgrp` works only on the caller's controlling terminal, so the program cannot
//! change it. Taking it back here would take the terminal from the shell, which moves it when the
//! user stops this job.

use std::os::fd::{AsFd, BorrowedFd};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::termios::{tcgetattr, tcsetattr, SetArg, Termios};
use nix::unistd::{getpgrp, isatty, tcgetpgrp, Pid};

/// The three standard streams, each with the file status flags it had.
#[derive(Debug, Clone)]
pub struct Saved {
    flags: [Option<OFlag>; 3],
    tty: Option<Tty>,
}

/// The terminal among the standard streams, as it was.
#[derive(Debug, Clone)]
struct Tty {
    /// Which standard stream it is.
    stream: usize,
    termios: Termios,
    /// The foreground process group when the launch started.
    foreground: Pid,
}

/// Calls `f` with standard input (0), output (1) or error (2).
fn with_stream<R>(index: usize, f: impl FnOnce(BorrowedFd<'_>) -> R) -> R {
    match index {
        0 => f(std::io::stdin().as_fd()),
        1 => f(std::io::stdout().as_fd()),
        _ => f(std::io::stderr().as_fd()),
    }
}

fn status_flags(fd: BorrowedFd<'_>) -> Option<OFlag> {
    fcntl(fd, FcntlArg::F_GETFL)
        .ok()
        .map(OFlag::from_bits_retain)
}

impl Saved {
    /// Records the standard streams as they are now. A stream that is closed has nothing to
    /// save, and is left alone.
    pub fn now() -> Self {
        let flags = [0, 1, 2].map(|i| with_stream(i, status_flags));
        let tty = (0..3).find_map(|i| {
            with_stream(i, |fd| {
                if !isatty(fd).unwrap_or(false) {
                    return None;
                }
                Some(Tty {
                    stream: i,
                    termios: tcgetattr(fd).ok()?,
                    foreground: tcgetpgrp(fd).ok()?,
                })
            })
        });
        Self { flags, tty }
    }

    /// Sets the standard streams back as they were recorded. Each step is tried whatever the
    /// others did: a stream that is gone cannot be helped, and that is no reason to leave the
    /// others as the program left them.
    pub fn restore(&self) {
        for (i, saved) in self.flags.iter().enumerate() {
            let Some(saved) = *saved else { continue };
            with_stream(i, |fd| {
                if status_flags(fd) != Some(saved) {
                    // F_SETFL changes only the flags it can (O_APPEND, O_NONBLOCK, O_ASYNC,
                    // ...); the access mode in `saved` is ignored by the kernel.
                    let _ignored = fcntl(fd, FcntlArg::F_SETFL(saved));
                }
            });
        }
        if let Some(tty) = &self.tty {
            with_stream(tty.stream, |fd| {
                let ours = getpgrp();
                if tty.foreground == ours
                    && tcgetpgrp(fd).ok() == Some(ours)
                    && tcgetattr(fd).ok().as_ref() != Some(&tty.termios)
                {
                    // SIGTTOU is blocked in this process (see `signals`), so this cannot stop it.
                    let _ignored = tcsetattr(fd, SetArg::TCSADRAIN, &tty.termios);
                }
            });
        }
    }
}

/// The terminal `--ask` puts its questions on (`/dev/tty`), shared with the relays of the
/// program's output, so that what the person reads as a question is one.
///
/// Under `--ask` the program holds no descriptor of the terminal (its output and errors reach it
/// through pipes relayed here, its input is not the terminal: `relay.rs`), and:
///
/// - while a question is open, the program's output is held: the relays write under the same
///   lock as the question, which keeps it from the person's question to their answer, so that
///   nothing the program writes can come after the question on the screen and draw over it;
/// - the program's output that goes to a terminal has its control characters shown as text
///   ([`Neutraliser`]): no escape sequence of the program's moves the cursor, erases a line,
///   hides text or leaves a sequence half-written to swallow the question;
/// - the question starts a line of its own and, where `TERM` names a terminal with attributes,
///   is shown in reverse video, which the program's output can no longer have;
/// - the path, the folder and the program's name are shown with every control and invisible
///   character escaped ([`shown`]);
/// - input typed before the question is dropped as it is shown (`tcflush`), so only an answer
///   typed after it counts; an answer it does not know asks again, naming the answers.
pub struct Console {
    state: std::sync::Mutex<Screen>,
    /// The program has ended: a question still open is withdrawn (refused), so that the relays
    /// it holds can pass on the rest of the output.
    ended: std::sync::atomic::AtomicBool,
}

/// What the lock guards: the terminal, and whether its cursor is at the start of a line.
struct Screen {
    tty: std::fs::File,
    at_line_start: bool,
    styled: bool,
}

/// How a line read from the terminal ended.
enum Line {
    /// A line the person typed (its first bytes).
    Typed(String),
    /// This process is no longer the terminal's foreground job: whatever comes is not an
    /// answer to the question on the screen.
    Background,
    /// End of input (Ctrl-D), a hang-up, or an error: no answer will come.
    Gone,
    /// The program ended while the question was open.
    Withdrawn,
}

impl Console {
    /// Opens this process's terminal, read-write.
    pub fn open() -> std::io::Result<std::sync::Arc<Self>> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")?;
        let styled = std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb");
        Ok(std::sync::Arc::new(Self {
            state: std::sync::Mutex::new(Screen {
                tty,
                at_line_start: true,
                styled,
            }),
            ended: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// Says that the program has ended: a question still open is withdrawn within 200 ms.
    pub fn program_ended(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn has_ended(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Screen> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Passes `bytes` of the program's output on to `to`, waiting while a question is open.
    /// `terminal` says whether `to` is a terminal, whose line the question must know about.
    pub fn pass(
        &self,
        to: &mut impl std::io::Write,
        bytes: &[u8],
        terminal: bool,
    ) -> std::io::Result<()> {
        let mut screen = self.lock();
        to.write_all(bytes)?;
        to.flush()?;
        if terminal {
            if let Some(&last) = bytes.last() {
                screen.at_line_start = last == b'\n';
            }
        }
        Ok(())
    }

    /// Puts `request` to the person and returns their answer: `o` (once), `f` (the folder, for
    /// a read), `n` (no). Refused where the terminal answers nothing (end of input, hang-up).
    pub fn ask(&self, request: &sandbox_core::OpenRequest) -> sandbox_core::Grant {
        use sandbox_core::{Access, Grant};
        use std::path::Path;
        let program = request
            .program
            .file_name()
            .map_or_else(|| shown(&request.program), |n| shown(Path::new(n)));
        // "Folder" grants the file's folder (the folder itself, for a folder): said, so that the
        // answer is given knowing what it covers.
        let (verb, choices, answers) = match request.access {
            Access::Read => {
                // Decided once, by the supervisor, when it put the question: the folder it
                // opened then is the one an `f` grants.
                let folder = request.folder.as_path();
                (
                    "read",
                    format!("[o]nce / [f]older {} / [n]o", shown(folder)),
                    "o (once), f (folder) or n (no)",
                )
            }
            _ => ("write", "[o]nce / [n]o".to_owned(), "o (once) or n (no)"),
        };
        let question = format!(
            "sandbox-check: {program} wants to {verb} {}: {choices}",
            shown(&request.path)
        );
        let mut screen = self.lock();
        let mut again = false;
        loop {
            if !screen.wait_for_foreground(|| self.has_ended()) {
                return Grant::Refuse;
            }
            let mut text = String::new();
            if !screen.at_line_start {
                text.push('\n');
            }
            if again {
                text.push_str(&format!("sandbox-check: answer {answers}\n"));
            }
            if screen.styled {
                // At the start of the line, cleared, then marked as no output of the program's
                // can be.
                text.push_str(&format!("\r\x1b[2K\x1b[7m{question}\x1b[m "));
            } else {
                text.push_str(&question);
                text.push(' ');
            }
            // Dropped before the question shows: a line typed at the program's own prompt, or
            // ahead of a question not yet seen, answers nothing.
            let _ignored =
                nix::sys::termios::tcflush(&screen.tty, nix::sys::termios::FlushArg::TCIFLUSH);
            if std::io::Write::write_all(&mut screen.tty, text.as_bytes()).is_err() {
                return Grant::Refuse;
            }
            screen.at_line_start = false;
            let answer = match screen.read_line(|| self.has_ended()) {
                Line::Typed(answer) => answer,
                // Put again once this process is back in the foreground.
                Line::Background => {
                    again = false;
                    continue;
                }
                Line::Gone => return Grant::Refuse,
                Line::Withdrawn => {
                    let _ignored = std::io::Write::write_all(
                        &mut screen.tty,
                        b"\nsandbox-check: the program ended; the question is withdrawn\n",
                    );
                    screen.at_line_start = true;
                    return Grant::Refuse;
                }
            };
            // The person's Enter ended the line.
            screen.at_line_start = true;
            match (answer.trim().to_ascii_lowercase().as_str(), request.access) {
                ("o" | "once", Access::Read) => return Grant::ReadOnce,
                ("o" | "once", Access::Write) => return Grant::WriteOnce,
                ("f" | "folder", Access::Read) => return Grant::ReadFolder,
                ("n" | "no", _) => return Grant::Refuse,
                _ => again = true,
            }
        }
    }
}

impl Screen {
    fn foreground(&self) -> bool {
        // A terminal whose foreground job cannot be read is taken as ours: the read then
        // fails (EIO) if it is not, which refuses.
        tcgetpgrp(&self.tty).map_or(true, |group| group == getpgrp())
    }

    /// Waits until this process is the terminal's foreground job: a question shown from the
    /// background would be answered by what the person types for another job, and input
    /// dropped from the background would be theirs.
    /// False where `ended` says the program ended first.
    fn wait_for_foreground(&self, ended: impl Fn() -> bool) -> bool {
        while !self.foreground() {
            if ended() {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        true
    }

    /// Reads one line from the terminal (canonical mode: it arrives whole), keeping its first
    /// 64 bytes.
    fn read_line(&mut self, ended: impl Fn() -> bool) -> Line {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::io::Read;
        let mut line = Vec::new();
        loop {
            if ended() {
                return Line::Withdrawn;
            }
            if !self.foreground() {
                return Line::Background;
            }
            let mut fds = [PollFd::new(self.tty.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(200u16)) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => {}
                Err(_) => return Line::Gone,
            }
            let mut buffer = [0u8; 256];
            match self.tty.read(&mut buffer) {
                Ok(0) => return Line::Gone,
                Ok(n) => {
                    let room = 64usize.saturating_sub(line.len());
                    line.extend_from_slice(&buffer[..n.min(room)]);
                    if buffer[..n].contains(&b'\n') {
                        return Line::Typed(String::from_utf8_lossy(&line).into_owned());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Line::Gone,
            }
        }
    }
}

/// A character a person cannot see for what it is: controls (C0, DEL, C1), bidirectional
/// embeddings, overrides and isolates, line and paragraph separators, zero-width and other
/// invisible format characters, and spaces other than the ASCII one.
fn invisible(c: char) -> bool {
    c.is_control()
        || c.is_whitespace() && c != ' '
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// A path as the question shows it: `~` for the home folder; each invisible character
/// ([`invisible`]) as `\u{...}` (C0 controls and DEL as `\xNN`), each byte that is not UTF-8 as
/// `\xNN`, and `\` as `\\`, so that two paths that differ look different and no name can move
/// the cursor, reorder the text or hide a part of itself.
pub fn shown(path: &std::path::Path) -> String {
    shown_under(path, crate::home::home().as_deref())
}

/// [`shown`], with `home` as the home folder.
fn shown_under(path: &std::path::Path, home: Option<&std::path::Path>) -> String {
    use std::os::unix::ffi::OsStrExt;
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => {
            format!("~/{}", escaped(rest.as_os_str().as_bytes()))
        }
        _ => escaped(path.as_os_str().as_bytes()),
    }
}

fn escaped(mut bytes: &[u8]) -> String {
    let mut out = String::new();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                push_escaped(&mut out, text);
                return out;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                push_escaped(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len());
                for byte in &rest[..bad] {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
                bytes = &rest[bad..];
            }
        }
    }
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7F}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
}

/// The program's output on its way to a terminal under `--ask`: every control character but
/// newline and tab (C0, DEL, and C1, which some terminals take as escape sequences too) shown as
/// text (`\x1b`, `\u{9b}`), and each byte that is not UTF-8 as `\xNN` (in a terminal that reads
/// bytes as Latin-1, `0x9b` alone starts a sequence). A character cut between two reads waits
/// for the rest.
#[derive(Debug, Default)]
pub struct Neutraliser {
    carry: Vec<u8>,
}

impl Neutraliser {
    /// `input` made harmless; an incomplete character at its end is kept for the next call.
    pub fn feed(&mut self, input: &[u8]) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(input);
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = &bytes[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    push_output(&mut out, text);
                    return out;
                }
                Err(e) => {
                    let (valid, tail) = rest.split_at(e.valid_up_to());
                    push_output(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.carry = tail.to_vec();
                            return out;
                        }
                        Some(bad) => {
                            for byte in &tail[..bad] {
                                out.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
                            }
                            rest = &tail[bad..];
                        }
                    }
                }
            }
        }
    }

    /// What is left at the end of the output: an incomplete character, as bytes.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.carry)
            .iter()
            .flat_map(|byte| format!("\\x{byte:02x}").into_bytes())
            .collect()
    }
}

fn push_output(out: &mut Vec<u8>, text: &str) {
    let mut utf8 = [0u8; 4];
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c as u8),
            c if (c as u32) < 0x20 || c == '\u{7F}' => {
                out.extend_from_slice(format!("\\x{:02x}", c as u32).as_bytes());
            }
            c if c.is_control() => {
                out.extend_from_slice(format!("\\u{{{:x}}}", c as u32).as_bytes());
            }
            c => out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_shown_carries_no_control_or_invisible_character() {
        use std::os::unix::ffi::OsStrExt;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(
            "/tmp/a\rb\x1b[2Jc\u{202e}vsc.\u{200b}d\u{2028}e\\x\u{9b}\u{feff}\u{a0}".as_bytes(),
        ));
        assert_eq!(
            shown_under(path, None),
            "/tmp/a\\x0db\\x1b[2Jc\\u{202e}vsc.\\u{200b}d\\u{2028}e\\\\x\\u{9b}\\u{feff}\\u{a0}"
        );
        let bytes = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff\x9bz"));
        assert_eq!(shown_under(bytes, None), "/tmp/\\xff\\x9bz");
    }

    #[test]
    fn a_path_beneath_the_home_folder_is_shown_from_it_and_the_folder_itself_whole() {
        use std::path::Path;
        let home = Some(Path::new("/home/user"));
        assert_eq!(
            shown_under(Path::new("/home/user/data.csv"), home),
            "~/data.csv"
        );
        assert_eq!(shown_under(Path::new("/home/user"), home), "/home/user");
        assert_eq!(
            shown_under(Path::new("/home/username/x"), home),
            "/home/username/x"
        );
    }

    #[test]
    fn output_keeps_text_newlines_and_tabs_and_shows_controls() {
        let mut n = Neutraliser::default();
        let mut out = n.feed(b"a\tb\r\n\x1b[2K\x07\x7f\xc2\x9b\xff");
        // "é" cut between two reads.
        out.extend(n.feed(b"\xc3"));
        out.extend(n.feed(b"\xa9\xe2"));
        out.extend(n.finish());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\tb\\x0d\n\\x1b[2K\\x07\\x7f\\u{9b}\\xff\u{e9}\\xe2"
        );
    }
}
