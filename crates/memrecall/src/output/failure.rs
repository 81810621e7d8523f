//! Failures with their documented exit codes, and output to stdout.

/// A failure with its documented exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn root(message: String) -> Self {
        Self { code: 3, message }
    }
    pub(crate) fn selector(message: String) -> Self {
        Self { code: 4, message }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Self {
            code: 1,
            message: chain_text(&error),
        }
    }
}

/// An error and its causes on one line, each cause said once: an error whose message already
/// quotes its source is not followed by that source again.
fn chain_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Writes to stdout; a reader that went away (`memrecall … | head`) ends the output quietly
/// instead of failing.
pub(crate) fn emit(text: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::from(anyhow::anyhow!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod chain_tests {
    #[derive(Debug, thiserror::Error)]
    #[error("the socket is open to others")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("refusing the server socket: {0}")]
    struct Outer(#[from] Inner);

    #[test]
    fn a_cause_already_quoted_by_its_error_is_not_repeated() {
        let failure = super::Failure::from(anyhow::Error::new(Outer(Inner)));
        assert_eq!(
            failure.message,
            "refusing the server socket: the socket is open to others"
        );
    }
}
