//! Adding memrecall's entries to a settings file and taking them out again, in place.

use std::path::Path;

use jsonc_parser::cst::CstInputValue;

use super::{Document, command_of, entries};
use crate::settings::{
    SettingsError, event_timeout, installed_events, is_memrecall_hook, program_of,
};
use crate::{Agent, HookTimeout};

impl Document {
    /// Adds `agent`'s entry running `command` under each of its events, or brings an entry that
    /// is there (an earlier install's) up to `command` and the current timeout; `false` when
    /// every one was already as it should be. Nothing is changed when the file's shape is wrong.
    pub fn merge(&mut self, agent: Agent, command: &str) -> Result<bool, SettingsError> {
        let hooks = match self.hooks(agent)? {
            Some(hooks) => hooks,
            None => self.root.object_value_or_set().object_value_or_set("hooks"),
        };
        let program = program_of(command);
        let program = Path::new(&program);
        let mut changed = false;
        for event in installed_events(agent) {
            let Some(groups) = hooks.array_value_or_create(event) else {
                continue;
            };
            let mut present = false;
            for (_, _, entry) in entries(&groups) {
                let Some(current) = command_of(&entry) else {
                    continue;
                };
                if current != command && !is_memrecall_hook(&current, agent, Some(program)) {
                    continue;
                }
                present = true;
                if current != command
                    && let Some(prop) = entry.get("command")
                {
                    prop.set_value(CstInputValue::String(command.to_owned()));
                    changed = true;
                }
                let timeout = event_timeout(agent, event).setting().to_string();
                let current_timeout = entry
                    .get("timeout")
                    .and_then(|p| p.value())
                    .and_then(|v| v.as_number_lit())
                    .map(|n| n.to_string());
                if current_timeout.as_deref() != Some(timeout.as_str()) {
                    match entry.get("timeout") {
                        Some(prop) => prop.set_value(CstInputValue::Number(timeout)),
                        None => {
                            entry.append("timeout", CstInputValue::Number(timeout));
                        }
                    }
                    changed = true;
                }
            }
            if !present {
                groups.append(group(agent, command, event_timeout(agent, event)));
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Removes `agent`'s memrecall entries (those [`is_memrecall_hook`] recognises, `program`
    /// among them), and each group, event list and `hooks` object that held only them; `false`
    /// when there was none.
    pub fn remove(&mut self, agent: Agent, program: Option<&Path>) -> bool {
        let Ok(Some(hooks)) = self.hooks(agent) else {
            return false;
        };
        let mut removed = false;
        for event in installed_events(agent) {
            let Some(groups) = hooks.array_value(event) else {
                continue;
            };
            let mut removed_here = false;
            for (group, list, entry) in entries(&groups) {
                let ours = command_of(&entry)
                    .is_some_and(|command| is_memrecall_hook(&command, agent, program));
                if !ours {
                    continue;
                }
                entry.remove();
                removed_here = true;
                if list.elements().is_empty() {
                    group.remove();
                }
            }
            if removed_here
                && groups.elements().is_empty()
                && let Some(prop) = hooks.get(event)
            {
                prop.remove();
            }
            removed |= removed_here;
        }
        if removed
            && hooks.properties().is_empty()
            && let Ok(Some(top)) = self.top()
            && let Some(prop) = top.get("hooks")
        {
            prop.remove();
        }
        removed
    }
}

/// One group holding memrecall's entry.
pub(super) fn group(agent: Agent, command: &str, timeout: HookTimeout) -> CstInputValue {
    let mut entry = Vec::new();
    if agent.conventions().hook_entry_named {
        entry.push(("name".to_owned(), CstInputValue::from("memrecall")));
    }
    entry.push(("type".to_owned(), CstInputValue::from("command")));
    entry.push(("command".to_owned(), CstInputValue::from(command)));
    entry.push((
        "timeout".to_owned(),
        CstInputValue::Number(timeout.setting().to_string()),
    ));
    CstInputValue::Object(vec![(
        "hooks".to_owned(),
        CstInputValue::Array(vec![CstInputValue::Object(entry)]),
    )])
}
