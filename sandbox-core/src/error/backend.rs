//! A backend's own error, and an enforcement check that failed.

use crate::observed::Observed;

/// A backend's own error: why it cannot confine this system, or why confining failed.
///
/// In this process (`support()`, a backend called directly) it wraps the backend's typed error
/// (for example the Linux backend's `LinuxError`), which a caller can downcast to match on. A
/// refusal made in the launcher crosses the status pipe as its [`code`](BackendError::code) and
/// its text ([`ReportedError`](super::report::ReportedError)): match on the code, which names the
/// kind the same way on both sides.
///
/// One that a grant would cure carries it typed ([`BackendError::remedy`]), across the pipe too:
/// its text ends with it, named as this process names remedies
/// ([`crate::remedy::phrasing`]: `add .read("/usr")` for an application, `add --read /usr` for
/// `sandbox-check`).
#[derive(Debug)]
pub struct BackendError {
    code: Option<std::borrow::Cow<'static, str>>,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
    remedy: Option<crate::remedy::Remedy>,
}

// Transparent: it reads as the backend's error, and its causes are that error's. With a remedy,
// the causes are written out here, so that the remedy comes last, after the deepest of them.
impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.remedy {
            None => self.source.fmt(f),
            Some(remedy) => write!(
                f,
                "{}: add {}",
                super::report::one_line(&*self.source),
                remedy.phrased()
            ),
        }
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.remedy {
            None => self.source.source(),
            // Already in the text.
            Some(_) => None,
        }
    }
}

impl BackendError {
    /// Wraps a backend's own error, without a code.
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            code: None,
            source: Box::new(source),
            remedy: None,
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
            remedy: None,
        }
    }

    /// With the grant that would cure it (the folder the program's loader lies in, to read),
    /// which its text names last, as this process names remedies ([`crate::remedy`]).
    #[must_use]
    pub fn with_remedy(mut self, remedy: crate::remedy::Remedy) -> Self {
        self.remedy = Some(remedy);
        self
    }

    /// The grant that would cure it, where one would: for an application to show in its own
    /// terms, or to offer.
    pub fn remedy(&self) -> Option<&crate::remedy::Remedy> {
        self.remedy.as_ref()
    }

    /// The launcher's reported error, with the code and the remedy it carried.
    #[cfg(unix)]
    pub(crate) fn reported(
        code: Option<String>,
        message: String,
        remedy: Option<crate::remedy::Remedy>,
    ) -> Self {
        Self {
            code: code.clone().map(std::borrow::Cow::Owned),
            source: Box::new(super::report::ReportedError { code, message }),
            remedy,
        }
    }

    /// Its text without the remedy: what crosses the pipe beside the typed remedy.
    #[cfg(unix)]
    pub(crate) fn text_without_remedy(&self) -> String {
        super::report::one_line(&*self.source)
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
