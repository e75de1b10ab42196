//! The environment a confined program gets: the locale and time zone, and a fixed `PATH`.
//!
//! A parent's environment often holds tokens and credentials; none of it is passed on. A variable
//! the application names with [`Sandbox::env`](crate::Sandbox::env) is added, or replaces one of
//! these.
//!
//! ```
//! assert!(sandbox_core::env::KEPT.contains(&"LANG"));
//! assert_eq!(sandbox_core::env::PATH, "/usr/bin:/bin");
//! ```

use std::ffi::OsString;

/// The variables kept from the launcher's environment, when set.
pub const KEPT: &[&str] = &["LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/// The `PATH` a confined program gets.
pub const PATH: &str = "/usr/bin:/bin";

/// The environment the program gets, built from `current` (the launcher's own).
pub fn for_program(
    current: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = current
        .into_iter()
        .filter(|(name, _)| KEPT.iter().any(|kept| name == kept))
        .collect();
    env.push(("PATH".into(), PATH.into()));
    env
}

/// `kept` with the variables the caller named set over it, each name once.
pub fn with_callers(
    mut kept: Vec<(OsString, OsString)>,
    callers: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    for (name, value) in callers {
        kept.retain(|(kept_name, _)| kept_name != name);
        kept.push((name.clone(), value.clone()));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_locale_and_time_zone_are_kept() {
        let current = [
            ("LANG", "C.UTF-8"),
            ("TZ", "UTC"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("PATH", "/home/u/bin"),
            ("LD_PRELOAD", "/tmp/evil.so"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = for_program(current);
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["LANG", "TZ", "PATH"]);
        assert_eq!(env[2].1, PATH);
    }
}
