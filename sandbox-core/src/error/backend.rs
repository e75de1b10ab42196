//! A backend's own error, and an enforcement check that failed.

use crate::check::Observed;

/// A backend's own error: why it cannot confine this system, or why confining failed.
///
/// In this process (`support()`, a backend called directly) it wraps the backend's typed error
/// (for example the Linux backend's `LinuxError`), which a caller can downcast to match on. A
/// refusal made in the launcher crosses the status pipe as its [`code`](BackendError::code) and
/// its text ([`ReportedError`](crate::raw::ReportedError)): match on the code, which names the
/// kind the same way on both sides.
#[derive(Debug)]
pub struct BackendError {
    code: Option<std::borrow::Cow<'static, str>>,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

// Transparent: it reads as the backend's error, and its causes are that error's.
impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.source()
    }
}

impl BackendError {
    /// Wraps a backend's own error, without a code.
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            code: None,
            source: Box::new(source),
        }
    }

    /// Wraps a backend's own error with `code`, a stable name of its kind (`"old-landlock"`,
    /// `"loader"`, `"scratch-not-fresh"`: the backend documents its codes), which survives the
    /// trip from the launcher.
    pub fn coded(
        code: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            code: Some(std::borrow::Cow::Borrowed(code)),
            source: Box::new(source),
        }
    }

    /// The launcher's reported error, with the code it carried.
    #[cfg(unix)]
    pub(crate) fn reported(code: Option<String>, message: String) -> Self {
        Self {
            code: code.clone().map(std::borrow::Cow::Owned),
            source: Box::new(super::report::ReportedError { code, message }),
        }
    }

    /// The stable name of the error's kind, where the backend gave one.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The backend's error, for downcasting.
    pub fn backend_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.source
    }
}

/// An attempt of the enforcement check did not turn out as required.
#[derive(Debug, thiserror::Error)]
#[error("the enforcement check: {attempt}: {observed}")]
pub struct CheckFailure {
    /// What was tried, as the check's table names it.
    pub attempt: &'static str,
    /// What happened instead.
    pub observed: Observed,
}
