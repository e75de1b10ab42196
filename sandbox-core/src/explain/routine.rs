//! What a program's runtime is refused in nearly every run and goes on without: never the
//! likeliest cause of a failure, and never a grant suggested by default.

/// Files a program's runtime looks for and goes on without (the loader's cache, the locale
/// alias table, the user and host databases, the time zone): refused in nearly every run, and
/// rarely why one failed.
pub const ROUTINE_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.preload",
    "/etc/locale.alias",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/host.conf",
    "/etc/gai.conf",
];

/// Calls refused in nearly every run and gone on without: `clone3`, for which the C library
/// falls back to `clone` when it gets `ENOSYS`.
pub const ROUTINE_CALLS: &[&str] = &["clone3"];
