//! An error as one line, and a refusal's report as the parent reads it.

/// Formats an error and its chain of sources on one line, `cause: its cause: ...`.
///
/// Control characters (a newline in a path, say) are escaped, so the text stays one line.
///
/// ```
/// let error = sandbox_core::Policy::new().allow_read("/no/such\nfolder").unwrap_err();
/// assert!(sandbox_core::one_line(&error).starts_with("/no/such\\nfolder: "));
/// ```
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A backend's error as the launcher reported it: its kind's code, where the backend gave one
/// (`BackendError::code`), and its text, one line.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ReportedError {
    /// The stable name of the error's kind.
    pub code: Option<String>,
    /// The error and its causes, as [`one_line`](crate::one_line) wrote them.
    pub message: String,
}

/// A report from the launcher that is not one this build writes.
#[derive(Debug, thiserror::Error)]
#[error("the launcher's report is malformed")]
pub struct MalformedReport;
