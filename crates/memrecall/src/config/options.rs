//! What `config.toml` chooses for every recall the product runs: the facade's options.

use recall_facade::{HttpSelectorConfig, RecallOptions, SelectorChoice};

use super::{Config, ConfigError, ConfigSelectorKind};
use agent_hooks::Environment;

impl From<Config> for RecallOptions {
    /// The selector, the delivery design, the delivery rule and the turn cap the file names;
    /// the facade's defaults for the rest.
    fn from(config: Config) -> Self {
        let selector = match config.selector.kind {
            ConfigSelectorKind::None => SelectorChoice::None,
            ConfigSelectorKind::Http => {
                let table = config.selector;
                let mut http = HttpSelectorConfig::new(
                    table.url.unwrap_or_default(),
                    table.model.unwrap_or_default(),
                );
                if let Some(var) = table.api_key_env {
                    http.api_key_env = var;
                }
                SelectorChoice::Http(http)
            }
        };
        let mut options = RecallOptions::default();
        options.selector = selector;
        options.design = config.delivery.design.into();
        options.rule = config.delivery.trim.into();
        if config.delivery.lines == Some(false) {
            options.tiering = recall_facade::Tiering::Off;
        }
        options.turn_cap = config.delivery.turn_cap;
        options
    }
}

/// What `config.toml` under the memrecall home chooses; the defaults without a home.
pub(crate) fn recall_options(env: &Environment) -> Result<RecallOptions, ConfigError> {
    let Some(home) = env.memrecall_home() else {
        return Ok(RecallOptions::default());
    };
    Ok(Config::load(&home)?.into())
}
