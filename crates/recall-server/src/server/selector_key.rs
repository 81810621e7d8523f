//! The server's HTTP selector and the key it sends. The server is started by the first hook that
//! finds none running and keeps that hook's environment; a key exported afterwards (and the agent
//! started again with it) would never reach it. So each prompt event carries the key the hook's
//! environment holds for `api_key_env` ([`crate::protocol::SelectorKey`]), and when it differs
//! from the one in use the selector is rebuilt with it: the prompt's own recall asks with the new
//! key. A prompt without a key leaves the one in use alone, so a hook started without the
//! variable does not take a working key away.

use std::sync::{Arc, Mutex};

use recall_facade::{ApiKey, HttpSelector, HttpSelectorConfig};
use selector::{CancellationToken, SelectionRequest, Selector, SelectorError};

use super::lock;

/// The HTTP selector of one configuration generation, rebuilt when a hook brings another key.
#[derive(Debug)]
pub(super) struct KeyedSelector {
    config: HttpSelectorConfig,
    current: Mutex<Current>,
}

#[derive(Debug)]
struct Current {
    /// The key the selector sends; `None`: no `Authorization` header.
    key: Option<Key>,
    selector: Arc<HttpSelector>,
}

/// A key, compared but never shown.
#[derive(Clone, PartialEq, Eq)]
struct Key(String);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

impl KeyedSelector {
    /// The selector `config` names, with the key this process's environment holds.
    pub(super) fn new(config: HttpSelectorConfig) -> Result<Self, recall_facade::FacadeError> {
        let key = std::env::var(&config.api_key_env)
            .ok()
            .filter(|value| !value.trim().is_empty())
            .map(Key);
        let selector = build(&config, key.as_ref())?;
        Ok(Self {
            config,
            current: Mutex::new(Current { key, selector }),
        })
    }

    /// The variable `api_key_env` names.
    pub(super) fn variable(&self) -> &str {
        &self.config.api_key_env
    }

    /// Whether the selector sends a key.
    pub(super) fn has_key(&self) -> bool {
        lock(&self.current).key.is_some()
    }

    /// Takes `value`, what a hook's environment holds in `variable`: when it is this selector's
    /// variable and not the key in use, the selector is rebuilt with it. Whether it was; a key
    /// that cannot be sent (not a header value) is refused, with why.
    pub(super) fn offer(
        &self,
        variable: &str,
        value: &str,
    ) -> Result<bool, recall_facade::FacadeError> {
        if variable != self.config.api_key_env || value.trim().is_empty() {
            return Ok(false);
        }
        let key = Key(value.to_owned());
        let mut current = lock(&self.current);
        if current.key.as_ref() == Some(&key) {
            return Ok(false);
        }
        current.selector = build(&self.config, Some(&key))?;
        current.key = Some(key);
        Ok(true)
    }
}

fn build(
    config: &HttpSelectorConfig,
    key: Option<&Key>,
) -> Result<Arc<HttpSelector>, recall_facade::FacadeError> {
    let key = key.map(|Key(value)| ApiKey::new(value.clone()));
    Ok(Arc::new(HttpSelector::with_api_key(config.clone(), key)?))
}

#[selector::async_trait]
impl Selector for KeyedSelector {
    async fn select(
        &self,
        request: SelectionRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, SelectorError> {
        let selector = Arc::clone(&lock(&self.current).selector);
        selector.select(request, cancel).await
    }

    fn failure_note(&self) -> Option<String> {
        lock(&self.current).selector.failure_note()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(variable: &str) -> KeyedSelector {
        let mut config = HttpSelectorConfig::new("http://127.0.0.1:9", "m");
        config.api_key_env = variable.to_owned();
        KeyedSelector::new(config).unwrap()
    }

    #[test]
    fn a_key_for_the_configured_variable_is_taken_once() {
        let selector = keyed("MEMRECALL_UNIT_KEY_NEVER_SET");
        assert!(!selector.has_key());
        assert!(matches!(
            selector.offer("MEMRECALL_UNIT_KEY_NEVER_SET", "k1"),
            Ok(true)
        ));
        assert!(selector.has_key());
        assert!(matches!(
            selector.offer("MEMRECALL_UNIT_KEY_NEVER_SET", "k1"),
            Ok(false)
        ));
        assert!(matches!(
            selector.offer("MEMRECALL_UNIT_KEY_NEVER_SET", "k2"),
            Ok(true)
        ));
    }

    #[test]
    fn another_variable_or_an_empty_value_changes_nothing() {
        let selector = keyed("MEMRECALL_UNIT_KEY_NEVER_SET");
        assert!(matches!(selector.offer("OTHER", "k1"), Ok(false)));
        assert!(matches!(
            selector.offer("MEMRECALL_UNIT_KEY_NEVER_SET", " "),
            Ok(false)
        ));
        assert!(!selector.has_key());
    }

    #[test]
    fn a_key_no_header_can_carry_is_refused_and_the_one_in_use_stays() {
        let selector = keyed("MEMRECALL_UNIT_KEY_NEVER_SET");
        assert!(
            selector
                .offer("MEMRECALL_UNIT_KEY_NEVER_SET", "a\nb")
                .is_err()
        );
        assert!(!selector.has_key());
        assert!(!format!("{selector:?}").contains("a\\nb"));
    }
}
