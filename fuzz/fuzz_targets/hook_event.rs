//! What `memrecall hook` does with its stdin, for every agent, on any bytes: text that is not
//! UTF-8 is refused before parsing (as the hook's read refuses it); anything else parses into an
//! event or an error, and the output rendered for it is the agent's JSON shape or its "nothing"
//! form; never a panic. (The hook turns every error into exit 0 and a log line.)
#![no_main]

use agent_hooks::Agent;
use agent_hooks::hook_io::{self, HookEvent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(stdin) = std::str::from_utf8(data) else {
        return;
    };
    for agent in Agent::ALL {
        let Ok(input) = hook_io::parse(agent, stdin) else {
            continue;
        };
        let context = match &input.event {
            HookEvent::Prompt { query, .. } => query.as_str(),
            _ => "",
        };
        let stdout = hook_io::render(agent, &input.event_name, context);
        if context.is_empty() {
            assert_eq!(stdout, hook_io::nothing(agent));
        } else {
            let value: serde_json::Value =
                serde_json::from_str(&stdout).expect("the rendered output is JSON");
            assert_eq!(
                value["hookSpecificOutput"]["additionalContext"].as_str(),
                Some(context)
            );
        }
    }
});
