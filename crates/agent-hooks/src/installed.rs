//! Which agents run memrecall's hook, and the layout each one reads: what a tool that reads
//! memory without being told a layout follows, so that a note written where it says is a note
//! the user's agent gets.
//!
//! A hook is installed when memrecall's entry is in the agent's user settings file
//! ([`settings::settings_path`]) or in the project settings file of the working directory or of
//! its git root, or when memrecall's Claude Code plugin or Gemini CLI or Qwen Code extension is
//! installed (`~/.claude/plugins/installed_plugins.json` names `memrecall@…`, or
//! `extensions/memrecall/` exists in the agent's directory). An entry reads the layout its command names with
//! `--layout`, else the agent's default ([`crate::default_layout`]); a plugin or extension runs
//! the hook without `--layout`.

use std::path::{Path, PathBuf};

use crate::settings::{self, Document};
use crate::{Agent, Environment, Layout, git};

/// Where an installed hook was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSource {
    /// memrecall's entry in this settings file.
    Settings(PathBuf),
    /// memrecall's plugin or extension, recorded at this path.
    Package(PathBuf),
}

/// One agent that runs memrecall's hook, and the layout the hook reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledHook {
    /// The agent.
    pub agent: Agent,
    /// The layout its hook reads.
    pub layout: Layout,
    /// Where it was found.
    pub source: HookSource,
}

impl InstalledHook {
    /// The hook in words: `claude-code's hook in /home/ana/.claude/settings.json`.
    pub fn describe(&self) -> String {
        match &self.source {
            HookSource::Settings(path) => {
                format!("{}'s hook in {}", self.agent.as_str(), path.display())
            }
            HookSource::Package(path) => format!(
                "{}'s memrecall {} ({})",
                self.agent.as_str(),
                self.agent
                    .conventions()
                    .packages
                    .map_or("package", |store| store.kind()),
                path.display()
            ),
        }
    }
}

/// The memrecall hooks the agents run for the working directory `cwd`, in agent order (user
/// settings, project settings, then the plugin or extension), each agent's layout once.
pub fn installed_hooks(cwd: &Path, env: &Environment) -> Vec<InstalledHook> {
    let mut projects = vec![cwd.to_path_buf()];
    if let Some(repository) = git::find(cwd)
        && !projects.contains(&repository.root)
    {
        projects.push(repository.root);
    }
    let mut hooks: Vec<InstalledHook> = Vec::new();
    for agent in Agent::ALL {
        let mut files: Vec<PathBuf> = settings::settings_path(agent, None, env)
            .into_iter()
            .collect();
        for project in &projects {
            if let Ok(path) = settings::settings_path(agent, Some(project), env)
                && !files.contains(&path)
            {
                files.push(path);
            }
        }
        let mut found: Vec<InstalledHook> = Vec::new();
        for file in files {
            for command in memrecall_commands(agent, &file) {
                found.push(InstalledHook {
                    agent,
                    layout: settings::layout_of(&command, agent),
                    source: HookSource::Settings(file.clone()),
                });
            }
        }
        found.extend(
            crate::agent_files::memrecall_package(agent, env).map(|path| InstalledHook {
                agent,
                layout: crate::default_layout(agent),
                source: HookSource::Package(path),
            }),
        );
        for hook in found {
            if !hooks
                .iter()
                .any(|h| h.agent == hook.agent && h.layout == hook.layout)
            {
                hooks.push(hook);
            }
        }
    }
    hooks
}

/// The layouts `hooks` read, each once, in order.
pub fn layouts(hooks: &[InstalledHook]) -> Vec<Layout> {
    let mut layouts = Vec::new();
    for hook in hooks {
        if !layouts.contains(&hook.layout) {
            layouts.push(hook.layout);
        }
    }
    layouts
}

/// The commands of memrecall's entries in `file`, none when it is missing or unreadable.
fn memrecall_commands(agent: Agent, file: &Path) -> Vec<String> {
    let Ok((text, true)) = settings::read(file) else {
        return Vec::new();
    };
    Document::parse(&text, agent, file)
        .map(|document| document.memrecall_commands(agent, None))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> (tempfile::TempDir, Environment, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let cwd = dir.path().join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        let env = Environment::from_pairs([("HOME", home.as_os_str())]);
        (dir, env, cwd)
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn install(path: &Path, agent: Agent, layout: Option<Layout>) {
        let command = settings::hook_command(agent, Path::new("/bin/memrecall"), layout);
        write(path, &settings::snippet(agent, &command));
    }

    #[test]
    fn with_nothing_installed_no_hook_is_found() {
        let (_dir, env, cwd) = world();
        assert_eq!(installed_hooks(&cwd, &env), []);
    }

    #[test]
    fn a_user_settings_entry_reads_its_agents_default_layout() {
        let (_dir, env, cwd) = world();
        let file = settings::settings_path(Agent::QwenCode, None, &env).unwrap();
        install(&file, Agent::QwenCode, None);
        let hooks = installed_hooks(&cwd, &env);
        assert_eq!(
            hooks,
            [InstalledHook {
                agent: Agent::QwenCode,
                layout: Layout::QwenCode,
                source: HookSource::Settings(file),
            }]
        );
    }

    #[test]
    fn a_project_entry_with_a_layout_reads_that_layout() {
        let (_dir, env, cwd) = world();
        let file = settings::settings_path(Agent::Codex, Some(&cwd), &env).unwrap();
        install(&file, Agent::Codex, Some(Layout::ClaudeCode));
        let hooks = installed_hooks(&cwd, &env);
        assert_eq!(layouts(&hooks), [Layout::ClaudeCode]);
        assert_eq!(hooks[0].source, HookSource::Settings(file));
    }

    #[test]
    fn plugins_and_extensions_count_as_installed_hooks() {
        let (_dir, env, cwd) = world();
        let home = env.home().unwrap();
        write(
            &home.join(".claude/plugins/installed_plugins.json"),
            r#"{"version":2,"plugins":{"memrecall@memrecall":[{"scope":"user"}]}}"#,
        );
        std::fs::create_dir_all(home.join(".gemini/extensions/memrecall")).unwrap();
        let hooks = installed_hooks(&cwd, &env);
        let agents: Vec<Agent> = hooks.iter().map(|h| h.agent).collect();
        assert_eq!(agents, [Agent::ClaudeCode, Agent::GeminiCli]);
        assert_eq!(layouts(&hooks), [Layout::ClaudeCode, Layout::Memrecall]);
        assert!(hooks[0].describe().contains("plugin"), "{:?}", hooks[0]);
    }

    #[test]
    fn another_plugin_is_not_memrecalls() {
        let (_dir, env, cwd) = world();
        write(
            &env.home()
                .unwrap()
                .join(".claude/plugins/installed_plugins.json"),
            r#"{"version":2,"plugins":{"notes@elsewhere":[]}}"#,
        );
        assert_eq!(installed_hooks(&cwd, &env), []);
    }

    #[test]
    fn an_unreadable_settings_file_is_no_hook() {
        let (_dir, env, cwd) = world();
        let file = settings::settings_path(Agent::ClaudeCode, None, &env).unwrap();
        write(&file, "{ not json");
        assert_eq!(installed_hooks(&cwd, &env), []);
    }
}
