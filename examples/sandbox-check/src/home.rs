//! The user's home folder, as `sandbox-check` shows paths under it and passes it to the
//! self-test.

use std::ffi::OsString;
use std::path::PathBuf;

/// `HOME` where it names an absolute folder other than `/`; `None` where it is unset, empty,
/// relative or `/`.
pub fn home() -> Option<PathBuf> {
    home_of(std::env::var_os("HOME"))
}

/// An empty `HOME` is a prefix of every path and `/` of every absolute one: taken as the home,
/// either would show every path as `~/...`.
fn home_of(value: Option<OsString>) -> Option<PathBuf> {
    value
        .map(PathBuf::from)
        .filter(|home| home.is_absolute() && home.parent().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_absolute_folder_other_than_the_root_is_a_home() {
        let cases: [(Option<&str>, Option<&str>); 6] = [
            (None, None),
            (Some(""), None),
            (Some("/"), None),
            (Some("relative"), None),
            (Some("/home/user"), Some("/home/user")),
            (Some("/root"), Some("/root")),
        ];
        for (value, expected) in cases {
            assert_eq!(
                home_of(value.map(OsString::from)),
                expected.map(PathBuf::from),
                "{value:?}"
            );
        }
    }
}
