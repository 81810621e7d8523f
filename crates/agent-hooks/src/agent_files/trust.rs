//! The hooks a user trusts, for an agent that runs no other
//! ([`HookTrust`](crate::conventions::HookTrust): Codex keeps a `trusted_hash` for each under
//! `hooks.state` in its `config.toml`).

use std::path::PathBuf;

use super::{agent_dir, toml_file};
use crate::{Agent, Environment};

/// What the agent's trust file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedHooks {
    /// The file the agent keeps its trust in.
    pub file: PathBuf,
    /// How many hooks it trusts (0 when the file is missing or cannot be parsed).
    pub trusted: usize,
}

/// The hooks the user trusts, for an agent that runs only those; `None` for an agent that runs
/// every hook its settings name (or without a directory to look in).
pub fn trusted_hooks(agent: Agent, env: &Environment) -> Option<TrustedHooks> {
    let trust = agent.conventions().hook_trust?;
    let file = agent_dir(agent, env)?.join(trust.file);
    let trusted = toml_file(&file)
        .and_then(|value| value.get("hooks")?.get("state").map(trusted_entries))
        .unwrap_or(0);
    Some(TrustedHooks { file, trusted })
}

/// How many entries under `value` carry a `trusted_hash`, at any depth.
fn trusted_entries(value: &toml::Value) -> usize {
    match value {
        toml::Value::Table(table) => {
            usize::from(table.contains_key("trusted_hash"))
                + table.values().map(trusted_entries).sum::<usize>()
        }
        toml::Value::Array(items) => items.iter().map(trusted_entries).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_hashes_are_counted_at_any_depth() {
        let value: toml::Value = toml::from_str(
            "[a.\"x\"]\ntrusted_hash = \"1\"\n[b]\nother = 2\n[[c]]\ntrusted_hash = \"2\"\n",
        )
        .unwrap();
        assert_eq!(trusted_entries(&value), 2);
    }

    #[test]
    fn only_an_agent_that_asks_for_trust_has_trusted_hooks() {
        let env = Environment::from_pairs([("HOME", "/nowhere")]);
        assert_eq!(trusted_hooks(Agent::ClaudeCode, &env), None);
        let codex = trusted_hooks(Agent::Codex, &env).unwrap();
        assert_eq!(codex.trusted, 0);
        assert!(codex.file.ends_with(".codex/config.toml"));
    }
}
