//! The errors of this crate, one enum per stage, each variant naming its cause and, where there is
//! one, its remedy.

pub(crate) mod backend;
pub(crate) mod command;
pub(crate) mod limit;
pub(crate) mod policy;
pub(crate) mod refusal;
pub(crate) mod report;
pub(crate) mod server;
pub(crate) mod wire;
