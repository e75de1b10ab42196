//! No launch server here: it needs Linux's parent-death signal to die with the application, and
//! the program with it. [`Server::start`] answers [`ServerError::Unsupported`], so a portable
//! application starts one where it can and launches without one elsewhere.

use std::convert::Infallible;

use crate::backend::Backend;
use crate::error::server::ServerError;

/// A launch server, which this system cannot have: [`Server::start`] always answers
/// [`ServerError::Unsupported`], and no value of this type exists.
#[derive(Debug)]
pub struct Server {
    never: Infallible,
}

impl Server {
    /// Answers [`ServerError::Unsupported`]: this system has no launch server.
    pub fn start(_backend: &dyn Backend) -> Result<Server, ServerError> {
        Err(ServerError::Unsupported)
    }

    /// The server's process ID (never called: no server exists here).
    pub fn id(&self) -> u32 {
        match self.never {}
    }

    /// The process IDs of the server's parked children (never called: no server exists here).
    pub fn parked(&self) -> std::io::Result<Vec<u32>> {
        match self.never {}
    }

    /// Hands a launch to the server (never called: no server exists here).
    #[cfg(unix)]
    pub(crate) fn launch(
        &self,
        _request: &crate::wire::Request,
        _stdio: [std::os::fd::OwnedFd; 3],
        _status: std::os::fd::OwnedFd,
    ) -> std::io::Result<Served> {
        match self.never {}
    }
}

/// A launch the server forked: none exists here.
#[derive(Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct Served {
    never: Infallible,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl Served {
    pub(crate) fn id(&self) -> u32 {
        match self.never {}
    }

    pub(crate) fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self.never {}
    }

    pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        match self.never {}
    }

    pub(crate) fn kill(&mut self) -> std::io::Result<()> {
        match self.never {}
    }

    pub(crate) fn killed_at_memory_bound(&self) -> bool {
        match self.never {}
    }
}
