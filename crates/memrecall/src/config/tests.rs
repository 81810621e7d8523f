//! `config.toml` parsing.

use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("config.toml"))
}

#[test]
fn a_secret_under_an_unknown_key_is_never_echoed_and_the_key_and_line_are_named() {
    let error = parse("[selector]\nkind = \"http\"\napi_key = \"sk-live-123456\"\n")
        .unwrap_err()
        .to_string();
    assert!(!error.contains("sk-live"), "{error}");
    assert!(error.contains("line 3, key `api_key`"), "{error}");
    assert!(error.contains("unknown field"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
}

#[test]
fn a_value_of_the_wrong_kind_is_reported_without_the_value() {
    let error = parse("[selector]\nkind = \"sk-secret-kind\"\n")
        .unwrap_err()
        .to_string();
    assert!(!error.contains("sk-secret"), "{error}");
    assert!(error.contains("line 2, key `kind`"), "{error}");
}

#[cfg(unix)]
#[test]
fn a_config_that_links_to_dev_zero_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join(CONFIG_FILE_NAME)).unwrap();
    let error = Config::load(dir.path()).unwrap_err().to_string();
    assert!(error.contains("a device"), "{error}");
}

#[test]
fn an_http_selector_table_is_read() {
    let config = parse(
        "[selector]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key_env = \"KEY\"\n",
    )
    .unwrap();
    assert_eq!(config.selector.kind, ConfigSelectorKind::Http);
    assert_eq!(config.selector.api_key_env.as_deref(), Some("KEY"));
}

#[test]
fn an_empty_file_means_no_selector() {
    assert_eq!(parse("").unwrap().selector.kind, ConfigSelectorKind::None);
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let error = parse("[selector]\nkind = \"none\"\nmodle = \"m\"\n").unwrap_err();
    assert!(error.to_string().contains("modle"), "{error}");
}

#[test]
fn an_unknown_kind_is_an_error_naming_the_key_and_what_is_expected() {
    let error = parse("[selector]\nkind = \"grpc\"\n").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("line 2, key `kind`: unknown variant `…`, expected `none` or `http`"),
        "{error}"
    );
}

#[test]
fn the_default_delivery_design_is_the_fast_path() {
    assert_eq!(
        parse("").unwrap().delivery.design,
        ConfigDeliveryDesign::FastPath
    );
}

#[test]
fn a_gated_delivery_design_is_read() {
    let config = parse("[delivery]\ndesign = \"gated\"\n").unwrap();
    assert_eq!(config.delivery.design, ConfigDeliveryDesign::Gated);
}

#[test]
fn an_unknown_delivery_design_is_an_error_naming_the_key_and_the_allowed_values() {
    let error = parse("[delivery]\ndesign = \"single-path\"\n").unwrap_err();
    let message = error.to_string();
    assert!(message.contains("delivery.design"), "{message}");
    assert!(message.contains("line 2, key `design`"), "{message}");
    assert!(message.contains("\"gated\""), "{message}");
    assert!(!message.contains("single-path"), "{message}");
}

#[test]
fn an_unknown_delivery_key_is_an_error_naming_it() {
    let error = parse("[delivery]\ndesgin = \"gated\"\n").unwrap_err();
    assert!(error.to_string().contains("desgin"), "{error}");
}

#[test]
fn the_default_trim_is_the_measured_rule() {
    assert_eq!(parse("").unwrap().delivery.trim, ConfigTrim::Measured);
}

#[test]
fn trim_none_restores_the_untrimmed_delivery() {
    let config = parse("[delivery]\ntrim = \"none\"\n").unwrap();
    assert_eq!(
        recall_facade::DeliveryRule::from(config.delivery.trim),
        recall_facade::DeliveryRule::UNTRIMMED
    );
}

#[test]
fn an_unknown_trim_is_an_error_naming_the_key_and_the_allowed_values() {
    let message = parse("[delivery]\ntrim = \"top-3\"\n")
        .unwrap_err()
        .to_string();
    assert!(message.contains("line 2, key `trim`"), "{message}");
    assert!(message.contains("\"measured\" or \"none\""), "{message}");
    assert!(
        !message.contains("top-3"),
        "the value is never echoed: {message}"
    );
}

#[test]
fn a_serve_idle_exit_is_read_as_a_duration() {
    let config = parse("[serve]\nidle_exit = \"90s\"\n").unwrap();
    let idle = config.serve.idle_exit.map(IdleExit::duration);
    assert_eq!(idle, Some(std::time::Duration::from_secs(90)));
}

#[test]
fn an_idle_exit_under_a_second_is_an_error_naming_the_key() {
    let error = parse("[serve]\nidle_exit = \"10ms\"\n").unwrap_err();
    assert!(error.to_string().contains("serve.idle_exit"), "{error}");
}

#[test]
fn an_http_selector_without_url_is_an_error_naming_the_key() {
    let error = parse("[selector]\nkind = \"http\"\nmodel = \"m\"\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "config.toml: selector.url is required when selector.kind = \"http\""
    );
}

#[test]
fn a_delivery_turn_cap_reaches_the_recall_options() {
    let config = parse("[delivery]\nturn_cap = 3\n").unwrap();
    let options = recall_facade::RecallOptions::from(config);
    assert_eq!(options.turn_cap.map(std::num::NonZeroUsize::get), Some(3));
}

#[test]
fn a_missing_turn_cap_leaves_turns_uncapped() {
    let options = recall_facade::RecallOptions::from(parse("[delivery]\n").unwrap());
    assert_eq!(options.turn_cap, None);
}

#[test]
fn a_turn_cap_of_zero_is_one_line_naming_the_key() {
    let message = parse("[delivery]\nturn_cap = 0\n").unwrap_err().to_string();
    assert!(message.contains("line 2, key `turn_cap`"), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn weak_matches_are_given_as_lines_unless_delivery_lines_is_false() {
    let default = recall_facade::RecallOptions::from(parse("").unwrap());
    assert_eq!(default.tiering, recall_facade::Tiering::SHIPPED);
    let off = recall_facade::RecallOptions::from(parse("[delivery]\nlines = false\n").unwrap());
    assert_eq!(off.tiering, recall_facade::Tiering::Off);
}
