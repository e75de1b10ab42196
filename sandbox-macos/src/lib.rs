//! The macOS backend (to come): the launcher re-executes itself under `/usr/bin/sandbox-exec`
//! with a deny-default profile built from the policy.
#![forbid(unsafe_code)]
