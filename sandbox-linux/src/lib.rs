//! The Linux backend (to come).
#![deny(unsafe_code)]
