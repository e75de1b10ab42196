//! What a confined program may reach: the paths it may read and the programs it may execute,
//! and how much of the machine it may take ([`Limits`]).
//!
//! A policy is validated when a path is added: the path is resolved once, and the policy keeps
//! both the canonical name and the identity (device, inode, kind) of the object it led to. The
//! launcher opens each name once and refuses when it is not that object, so a path that vanished
//! or was swapped in between is refused rather than quietly dropped or widened.

use std::collections::hash_map::{Entry, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::identity::Identity;
use crate::error::policy::PolicyError;
use crate::limits::Limits;
use crate::scratch::ScratchGrant;

/// The paths a confined program may read, and those it may execute.
///
/// Every path is absolute, exists, and is stored in its canonical form (no `.`/`..`, no symbolic
/// link), so what the policy grants is exactly what [`Policy::read_paths`] and
/// [`Policy::exec_paths`] show. A folder covers everything beneath it.
///
/// Links on the way are followed (`/tmp/x` on macOS becomes `/private/tmp/x`). A path that itself
/// is a symbolic link to a file is resolved to that file. A path that itself is a symbolic link to
/// a folder is refused: following it would silently grant a whole tree the caller never named (a
/// link to `/` would grant everything), so the caller lists the folder itself.
///
/// Each path is resolved once, and the policy records what it led to ([`Policy::read_identity`]):
/// the launcher grants that object or refuses, whatever the name leads to by then.
///
/// ```
/// use sandbox_core::Policy;
/// let policy = Policy::new().allow_read("/")?;
/// assert_eq!(policy.read_paths()[0], std::path::Path::new("/"));
/// # Ok::<(), sandbox_core::PolicyError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    read: Paths,
    exec: Paths,
    limits: Limits,
    scratch: Option<ScratchGrant>,
    local_socket_pairs: bool,
    write: Paths,
    processes: bool,
    hosts: Vec<crate::net::Host>,
    max_connections: Option<u32>,
    net_log: Option<crate::net::NetLog>,
    /// The launcher's end of the socket the proxy asks the application's function on
    /// ([`Sandbox::on_connect`](crate::Sandbox::on_connect)); set for one launch only.
    decider: Option<crate::net::NetLog>,
}

/// Paths in the order they were added, each once, with what each led to.
///
/// A launcher decodes every path of a policy, encodes them, and looks up each one's identity as
/// it makes its rule, so these are all kept cheap for a thousand paths: the index makes adding
/// one constant time (pairwise comparison cost tens of milliseconds), it is keyed by the path's
/// bytes (every path here is canonical, so its bytes compare as its components do, and hashing
/// bytes is several times cheaper than hashing a `Path` component by component), and the lists
/// are shared between clones (the parent clones the policy for every launch, the launcher for
/// its grants) until one of them adds a path.
#[derive(Debug, Clone, Default)]
struct Paths(Arc<Entries>);

#[derive(Debug, Clone, Default)]
struct Entries {
    ordered: Vec<PathBuf>,
    identities: Vec<Identity>,
    index: HashMap<OsString, usize>,
}

impl PartialEq for Paths {
    fn eq(&self, other: &Self) -> bool {
        // The index follows from the list.
        self.0.ordered == other.0.ordered && self.0.identities == other.0.identities
    }
}

impl Eq for Paths {}

impl Paths {
    /// Adds `path`, canonical, unless it is there; a path added again keeps the identity it was
    /// first added with, the object the launcher will insist on.
    fn push(&mut self, path: PathBuf, identity: Identity) {
        let entries = Arc::make_mut(&mut self.0);
        let next = entries.ordered.len();
        if let Entry::Vacant(slot) = entries.index.entry(path.as_os_str().to_os_string()) {
            slot.insert(next);
            entries.ordered.push(path);
            entries.identities.push(identity);
        }
    }

    /// Makes room for `more` paths.
    fn reserve(&mut self, more: usize) {
        let entries = Arc::make_mut(&mut self.0);
        entries.ordered.reserve(more);
        entries.identities.reserve(more);
        entries.index.reserve(more);
    }

    /// What `path` led to. A path spelled otherwise than it is stored (`/usr/`) is found as
    /// `Path`'s comparison would find it, by its components.
    fn identity(&self, path: &Path) -> Option<Identity> {
        let at = match self.0.index.get(path.as_os_str()) {
            Some(&at) => at,
            None => {
                let normal: PathBuf = path.components().collect();
                if normal.as_os_str() == path.as_os_str() {
                    return None;
                }
                *self.0.index.get(normal.as_os_str())?
            }
        };
        self.0.identities.get(at).copied()
    }

    /// The paths with what each led to, in order.
    fn entries(&self) -> impl Iterator<Item = (&PathBuf, Identity)> {
        self.0.ordered.iter().zip(self.0.identities.iter().copied())
    }

    fn contains_prefix_of(&self, path: &Path) -> bool {
        self.0
            .ordered
            .iter()
            .any(|granted| path.starts_with(granted))
    }
}

impl Policy {
    /// A policy that allows nothing: the program may read no file and execute none but itself.
    /// It takes from the machine no more than [`Limits::default`] allows.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the bounds on what the program may take from the machine.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Lets the program make connected pairs of local stream sockets (`socketpair` of
    /// `AF_UNIX` with `SOCK_STREAM` or `SOCK_SEQPACKET`), which event loops use to wake
    /// themselves (Python's `asyncio` and `trio`). Off by default.
    ///
    /// A pair reaches nothing outside the program: its two ends are connected to each other
    /// and to nothing else, no socket may be made, named, connected or listened on, and a
    /// datagram pair stays refused, because `sendto` with an address sends past its peer to any
    /// named socket. What a pair lets the program do is what a pipe does, both ways, and pass
    /// its own descriptors to itself. A backend that cannot allow exactly that refuses the
    /// launch.
    pub fn allow_local_socket_pairs(mut self) -> Self {
        self.local_socket_pairs = true;
        self
    }

    /// Whether the program may make local socket pairs
    /// ([`Policy::allow_local_socket_pairs`]).
    pub fn local_socket_pairs(&self) -> bool {
        self.local_socket_pairs
    }

    /// Lets the program write beneath `path`, a folder: read, create, write, truncate, remove,
    /// rename and link files and folders there, and make symbolic links; nothing across the
    /// folder's edge (no rename or link out of it or into it), no device, FIFO or socket, no
    /// execution unless an exec path lies there too. Off by default.
    ///
    /// Refused here by name: `/`, a folder directly beneath it, and a folder at or beneath one
    /// of the system's ([`crate::opt_in::write_path::SYSTEM_FOLDERS`]: `/usr`, `/etc`, `/proc`, ...), the
    /// home folder (`HOME`), and a path that is not a folder. The launcher refuses, besides, a folder holding the canary or the launcher, or lying
    /// beneath an exec folder; an exec path at or beneath it is the application's explicit
    /// choice of write-then-execute, allowed (`opt_in::overlaps`).
    pub fn allow_write(mut self, path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let (path, identity) = canonical(path.as_ref())?;
        crate::opt_in::write_path::check_write_path(&path, identity)?;
        self.write.push(path, identity);
        Ok(self)
    }

    /// The canonical folders the program may write beneath ([`Policy::allow_write`]), in order.
    pub fn write_paths(&self) -> &[PathBuf] {
        &self.write.0.ordered
    }

    /// [`Policy::write_paths`], each with what it led to when it was resolved.
    pub fn write_entries(&self) -> impl Iterator<Item = (&PathBuf, Identity)> {
        self.write.entries()
    }

    /// What `path`, one of [`Policy::write_paths`], led to when it was resolved.
    pub fn write_identity(&self, path: &Path) -> Option<Identity> {
        self.write.identity(path)
    }

    /// Adds a write folder another process resolved, as the wire carries it (see
    /// [`Policy::add_resolved`]).
    pub(crate) fn add_resolved_write(
        &mut self,
        path: PathBuf,
        identity: Identity,
    ) -> Result<(), PolicyError> {
        check_canonical(&path)?;
        crate::opt_in::write_path::check_write_path(&path, identity)?;
        self.write.push(path, identity);
        Ok(())
    }

    /// Lets the program start processes (`fork`, `clone` of a process, `vfork`). Off by default.
    ///
    /// Each one inherits the program's confinement (its Landlock domain, its filters, its
    /// bounds); signals reach only processes of the same launch; and none outlives the launch.
    /// A backend that cannot hold all three refuses the launch, naming this opt-in.
    pub fn allow_processes(mut self) -> Self {
        self.processes = true;
        self
    }

    /// Whether the program may start processes ([`Policy::allow_processes`]).
    pub fn processes(&self) -> bool {
        self.processes
    }

    /// Lets the program open TCP connections to `host` (`HOST[:PORT]`, a name or a literal
    /// address, port 443 by default; [`crate::net::Host::parse`]), through a proxy the launch
    /// runs for it, whose address its environment names (`HTTPS_PROXY` and the others). Nothing
    /// else is reachable: no other address or port, no UDP, no listening, no name resolution
    /// of the program's own. A backend that cannot hold that refuses the launch.
    pub fn allow_host(mut self, host: &str) -> Result<Self, PolicyError> {
        let host = crate::net::Host::parse(host).map_err(PolicyError::Host)?;
        if !self.hosts.contains(&host) {
            self.hosts.push(host);
        }
        Ok(self)
    }

    /// The destinations the program may reach ([`Policy::allow_host`]), in the order added.
    pub fn hosts(&self) -> &[crate::net::Host] {
        &self.hosts
    }

    /// Bounds the connections the proxy makes for one launch to `max`; past it, it refuses.
    /// Without this, [`crate::net::DEFAULT_MAX_CONNECTIONS`].
    pub fn with_max_connections(mut self, max: u32) -> Self {
        self.max_connections = Some(max);
        self
    }

    /// The bound [`Policy::with_max_connections`] set, if it was set: what the launcher's
    /// arguments carry, so that the request they decode to is this one exactly.
    pub(crate) fn max_connections_set(&self) -> Option<u32> {
        self.max_connections
    }

    /// How many connections one launch may have ([`Policy::with_max_connections`]).
    pub fn max_connections(&self) -> u32 {
        self.max_connections
            .unwrap_or(crate::net::DEFAULT_MAX_CONNECTIONS)
    }

    /// Appends one JSON line for each connection the proxy decides to `log` (a file opened for
    /// appending): the destination, `allowed` or `refused`, and why.
    ///
    /// The policy keeps its own copy of the descriptor, numbered 10 or above and close-on-exec,
    /// clear of the numbers a launch puts its own descriptors at; an error where no copy can be
    /// made (the process has no descriptor left).
    #[cfg(unix)]
    pub fn with_net_log(mut self, log: std::fs::File) -> std::io::Result<Self> {
        let copy = nix::fcntl::fcntl(&log, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))?;
        let copy = crate::sys::take_descriptor(copy)?;
        self.net_log = Some(crate::net::NetLog(Arc::new(copy.into())));
        Ok(self)
    }

    /// The log's descriptor, shared, for the launcher's command to inherit.
    #[cfg(unix)]
    pub(crate) fn net_log_shared(&self) -> Option<Arc<std::os::fd::OwnedFd>> {
        self.net_log.as_ref().map(|log| Arc::clone(&log.0))
    }

    /// The launch's end of the socket on which the proxy asks the application's function
    /// ([`Sandbox::on_connect`](crate::Sandbox::on_connect)); a copy numbered 10 or above and
    /// close-on-exec, as for [`Policy::with_net_log`].
    #[cfg(unix)]
    pub(crate) fn with_decider(mut self, socket: std::os::fd::OwnedFd) -> std::io::Result<Self> {
        let copy = nix::fcntl::fcntl(&socket, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))?;
        let copy = crate::sys::take_descriptor(copy)?;
        self.decider = Some(crate::net::NetLog(Arc::new(copy.into())));
        Ok(self)
    }

    /// The decider's socket, shared, for the launcher's command to inherit.
    #[cfg(unix)]
    pub(crate) fn decider_shared(&self) -> Option<Arc<std::os::fd::OwnedFd>> {
        self.decider.as_ref().map(|d| Arc::clone(&d.0))
    }

    /// The socket on which the launch's proxy asks the application's function about
    /// destinations off the list ([`Sandbox::on_connect`](crate::Sandbox::on_connect)), if
    /// the application gave one.
    #[cfg(unix)]
    pub fn decider(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.decider.as_ref().map(|d| d.0.as_fd())
    }

    /// Where the proxy logs its decisions ([`Policy::with_net_log`]), if anywhere.
    #[cfg(unix)]
    pub fn net_log(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.net_log.as_ref().map(|log| log.0.as_fd())
    }

    /// The bounds on what the program may take from the machine.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Allows reading `path` (a file, or a folder and everything beneath it).
    pub fn allow_read(mut self, path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let (path, identity) = canonical(path.as_ref())?;
        self.read.push(path, identity);
        Ok(self)
    }

    /// Allows executing (and reading) `path`: a program, or a folder whose programs all may run.
    pub fn allow_exec(mut self, path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let (path, identity) = canonical(path.as_ref())?;
        self.exec.push(path, identity);
        Ok(self)
    }

    /// Adds a path another process resolved, as the wire carries it: `path` must be absolute and
    /// in canonical form, which is checked here without touching the file system, since the
    /// launcher opens it once, later, and compares what it finds against `identity`. In place,
    /// since a decoder adds thousands.
    pub(crate) fn add_resolved(
        &mut self,
        exec: bool,
        path: PathBuf,
        identity: Identity,
    ) -> Result<(), PolicyError> {
        check_canonical(&path)?;
        let list = if exec { &mut self.exec } else { &mut self.read };
        list.push(path, identity);
        Ok(())
    }

    /// Makes room for `more` read paths, which a decoder knows before it adds them.
    pub(crate) fn reserve_read(&mut self, more: usize) {
        self.read.reserve(more);
    }

    /// Adds a scratch folder another process made, as the wire carries it: its path is checked
    /// for form only, as [`Policy::add_resolved`] does.
    pub(crate) fn with_resolved_scratch(self, grant: ScratchGrant) -> Result<Self, PolicyError> {
        check_canonical(&grant.path)?;
        Ok(self.with_scratch(grant))
    }

    /// The canonical paths the program may read, in the order they were added.
    pub fn read_paths(&self) -> &[PathBuf] {
        &self.read.0.ordered
    }

    /// The canonical paths the program may execute and read, in the order they were added.
    pub fn exec_paths(&self) -> &[PathBuf] {
        &self.exec.0.ordered
    }

    /// What `path`, one of [`Policy::read_paths`], led to when it was resolved.
    pub fn read_identity(&self, path: &Path) -> Option<Identity> {
        self.read.identity(path)
    }

    /// What `path`, one of [`Policy::exec_paths`], led to when it was resolved.
    pub fn exec_identity(&self, path: &Path) -> Option<Identity> {
        self.exec.identity(path)
    }

    /// [`Policy::read_paths`], each with what it led to when it was resolved, in the same order:
    /// what [`Policy::read_identity`] gives for each, without looking it up. For a caller that
    /// goes through every path, such as an encoder or a backend making its rules.
    pub fn read_entries(&self) -> impl Iterator<Item = (&PathBuf, Identity)> {
        self.read.entries()
    }

    /// [`Policy::exec_paths`], each with what it led to, in the same order (see
    /// [`Policy::read_entries`]).
    pub fn exec_entries(&self) -> impl Iterator<Item = (&PathBuf, Identity)> {
        self.exec.entries()
    }

    /// Lets the program create, write, rename and remove files and folders in a scratch folder
    /// ([`Scratch::grant`](crate::scratch::Scratch::grant)), and nothing else: no symbolic links, devices, pipes or
    /// sockets, nothing that reaches outside it, no execution. A policy has at most one; a second
    /// replaces the first. The launcher refuses a folder that is not empty, so give each launch a
    /// [`Scratch`](crate::scratch::Scratch) of its own. Without one, the program writes no file but `/dev/null`.
    pub fn with_scratch(mut self, grant: ScratchGrant) -> Self {
        self.scratch = Some(grant);
        self
    }

    /// The scratch folder, if the policy has one.
    pub fn scratch(&self) -> Option<&ScratchGrant> {
        self.scratch.as_ref()
    }

    /// Whether `path` lies at or beneath any path this policy grants, read or execute.
    ///
    /// The comparison is by components of canonical paths; `path` is expected to be canonical.
    pub fn covers(&self, path: &Path) -> bool {
        self.read.contains_prefix_of(path) || self.exec.contains_prefix_of(path)
    }
}

/// Refuses a path that is not absolute and in canonical form, without touching the file system:
/// `/`, or `/` and names each followed by one `/` but the last, none `.` or `..` (what
/// `Path::components` would put back together unchanged, checked in one pass over the bytes).
fn check_canonical(path: &Path) -> Result<(), PolicyError> {
    check_form(path)?;
    let bytes = path.as_os_str().as_encoded_bytes();
    // `is_absolute` alone would let a Windows prefix through; every path here starts at `/`.
    let canonical = bytes == b"/"
        || bytes.first() == Some(&b'/')
            && bytes[1..]
                .split(|&b| b == b'/')
                .all(|name| !matches!(name, b"" | b"." | b".."));
    if !canonical {
        return Err(PolicyError::NotCanonical {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Refuses what no system call can take and what means something else to the launcher.
fn check_form(path: &Path) -> Result<(), PolicyError> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(PolicyError::ContainsNul {
            path: path.to_path_buf(),
        });
    }
    if !path.is_absolute() {
        return Err(PolicyError::Relative {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Checks a path and returns the canonical form the policy stores, with what it led to: resolved
/// as this system can name an open object (`platform::resolve_path`).
fn canonical(path: &Path) -> Result<(PathBuf, Identity), PolicyError> {
    check_form(path)?;
    crate::platform::resolve_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_refused() {
        let err = Policy::new().allow_read("usr").unwrap_err();
        assert!(matches!(err, PolicyError::Relative { .. }), "{err}");
    }

    #[test]
    fn a_nul_byte_is_refused() {
        let err = Policy::new().allow_read("/usr\0/bin").unwrap_err();
        assert!(matches!(err, PolicyError::ContainsNul { .. }), "{err}");
    }

    #[test]
    fn a_missing_path_is_refused_with_its_cause() {
        let err = Policy::new()
            .allow_exec("/nonexistent-sandbox-test/x")
            .unwrap_err();
        match err {
            PolicyError::Unreadable { source, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn dot_components_are_resolved_and_duplicates_kept_once() {
        let policy = Policy::new()
            .allow_read("/")
            .unwrap()
            .allow_read("/./")
            .unwrap();
        assert_eq!(policy.read_paths(), &[PathBuf::from("/")]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_folder_is_refused_and_a_link_to_a_file_resolved() {
        let dir = std::env::temp_dir().join(format!("sandbox-policy-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        let to_root = dir.join("to-root");
        let to_file = dir.join("to-file");
        let _ = std::fs::remove_file(&to_root);
        let _ = std::fs::remove_file(&to_file);
        std::os::unix::fs::symlink("/", &to_root).unwrap();
        std::os::unix::fs::symlink(&file, &to_file).unwrap();

        let err = Policy::new().allow_read(&to_root).unwrap_err();
        assert!(
            matches!(&err, PolicyError::LinkToFolder { target, .. } if target == Path::new("/")),
            "{err}"
        );
        let policy = Policy::new().allow_read(&to_file).unwrap();
        assert_eq!(policy.read_paths(), &[file.canonicalize().unwrap()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn each_path_keeps_the_identity_of_what_it_led_to_when_added() {
        use crate::backend::identity::Kind;
        use std::os::unix::fs::MetadataExt;

        let dir = std::env::temp_dir().join(format!("sandbox-policy-id-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("granted")).unwrap();
        std::fs::write(dir.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.join("file"), dir.join("to-file")).unwrap();
        let granted = dir.join("granted").canonicalize().unwrap();
        let file = dir.join("file").canonicalize().unwrap();
        let policy = Policy::new()
            .allow_read(&granted)
            .unwrap()
            .allow_exec(dir.join("to-file"))
            .unwrap();
        let (g, f) = (
            std::fs::metadata(&granted).unwrap(),
            std::fs::metadata(&file).unwrap(),
        );
        let read = policy.read_identity(&granted).unwrap();
        assert_eq!(
            (read.device, read.inode, read.kind),
            (g.dev(), g.ino(), Kind::Folder)
        );
        // A link to a file is stored as the file, with the file's identity.
        let exec = policy.exec_identity(&file).unwrap();
        assert_eq!(
            (exec.device, exec.inode, exec.kind),
            (f.dev(), f.ino(), Kind::File)
        );
        assert_eq!(policy.read_identity(&file), None);

        // Swapped afterwards: the policy still names what it resolved, for the launcher to insist
        // on; adding the path again keeps that.
        std::fs::rename(&granted, dir.join("moved")).unwrap();
        std::fs::create_dir(&granted).unwrap();
        let again = policy.clone().allow_read(&granted).unwrap();
        assert_eq!(again.read_identity(&granted), Some(read));
        assert_eq!(again.read_paths(), policy.read_paths());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entries_follow_the_order_and_a_clone_adds_without_changing_the_original() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let policy = Policy::new()
            .allow_read("/")
            .unwrap()
            .allow_read(&dir)
            .unwrap();
        let entries: Vec<_> = policy.read_entries().collect();
        assert_eq!(
            entries,
            [
                (
                    &PathBuf::from("/"),
                    policy.read_identity(Path::new("/")).unwrap()
                ),
                (&dir, policy.read_identity(&dir).unwrap()),
            ]
        );
        // Shared until one adds: then the one that added has it, the other does not.
        let wider = policy
            .clone()
            .allow_exec("/")
            .unwrap()
            .allow_read("/usr")
            .unwrap();
        assert_eq!(policy.read_paths(), [PathBuf::from("/"), dir.clone()]);
        assert!(policy.exec_paths().is_empty());
        assert_eq!(wider.read_paths().len(), 3);
        assert_eq!(wider.exec_entries().count(), 1);
        assert_ne!(policy, wider);
        assert_eq!(policy, policy.clone().allow_read(&dir).unwrap());
    }

    #[test]
    fn an_identity_is_found_by_any_spelling_of_its_path_as_path_compares() {
        let policy = Policy::new().allow_read("/usr").unwrap();
        let usr = policy.read_identity(Path::new("/usr"));
        assert!(usr.is_some());
        for spelling in ["/usr/", "//usr", "/./usr/."] {
            assert_eq!(policy.read_identity(Path::new(spelling)), usr, "{spelling}");
        }
        for other in ["/usr/..", "usr", "/usr/bin", "/"] {
            assert_eq!(policy.read_identity(Path::new(other)), None, "{other}");
        }
    }

    #[test]
    fn covers_compares_components_not_text() {
        let policy = Policy::new().allow_read("/usr").unwrap();
        assert!(policy.covers(Path::new("/usr/bin")));
        assert!(!policy.covers(Path::new("/usrx")));
    }
}
