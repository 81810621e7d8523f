use super::*;

#[test]
fn base_url_without_version_gets_v1_chat_completions() {
    let url = chat_completions_url("http://127.0.0.1:8080/").unwrap();
    assert_eq!(url.as_str(), "http://127.0.0.1:8080/v1/chat/completions");
}

#[test]
fn base_url_ending_in_v1_gets_only_chat_completions() {
    let url = chat_completions_url("http://localhost:11434/v1").unwrap();
    assert_eq!(url.as_str(), "http://localhost:11434/v1/chat/completions");
}

#[test]
fn base_url_without_a_host_is_a_config_error() {
    for base in ["http://", "https://", "http:"] {
        let error = chat_completions_url(base).unwrap_err();
        assert!(
            matches!(
                error,
                ConfigError::NoHost { .. } | ConfigError::BaseUrl { .. }
            ),
            "{base}: {error:?}"
        );
    }
}

#[test]
fn base_url_with_another_scheme_is_a_config_error() {
    let error = chat_completions_url("ftp://example.com").unwrap_err();
    assert!(matches!(error, ConfigError::Scheme { .. }));
}
