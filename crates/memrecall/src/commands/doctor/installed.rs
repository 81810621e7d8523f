//! The memrecall hooks an agent runs, wherever they come from: its settings file and the packages
//! it has enabled (plugins, extensions). A package that covers the events is a working install,
//! not a missing hook; the same hook in both is run twice.

use std::path::Path;

use super::Problem;
use super::checks::{HookReport, hook_problems};
use super::packages::PackageReport;
use agent_hooks::Agent;
use agent_hooks::settings::Document;

/// One agent's sources of hook entries.
pub(super) struct Installed<'a> {
    pub(super) agent: Agent,
    /// The settings file.
    pub(super) settings: &'a Path,
    /// The memrecall entries in it.
    pub(super) hooks: &'a [HookReport],
    pub(super) packages: &'a [PackageReport],
}

impl Installed<'_> {
    /// The packages whose hooks the agent runs in the directory.
    fn running(&self) -> Vec<&PackageReport> {
        self.packages.iter().filter(|p| p.runs_hooks()).collect()
    }

    /// The events neither the settings nor a package the agent runs covers.
    pub(super) fn missing_events(&self, document: Option<&Document>) -> Vec<&'static str> {
        let running = self.running();
        let mut missing = document
            .map(|d| d.missing_events(self.agent, None))
            .unwrap_or_default();
        missing.retain(|event| !running.iter().any(|p| !p.missing_events.contains(event)));
        missing
    }

    /// What is wrong with the hooks: none at all (or only in a package not enabled here), events
    /// left out, the same hook installed twice, and each settings entry's own problems.
    pub(super) fn problems(
        &self,
        missing: &[&str],
        cwd: &Path,
        binary: &str,
        fix: &str,
        problems: &mut Vec<Problem>,
    ) {
        let agent = self.agent.as_str();
        let running = self.running();
        let disabled = self
            .packages
            .iter()
            .find(|p| !p.enabled && !p.hooks.is_empty());
        if let (true, true, Some(package)) = (running.is_empty(), self.hooks.is_empty(), disabled) {
            problems.push(Problem::new(
                format!(
                    "{agent}: the {} {} holds the memrecall hook but is not enabled for {}",
                    package.kind,
                    package.name,
                    cwd.display()
                ),
                package.enable_command(self.agent),
            ));
            return;
        }
        let Some(package) = running.first() else {
            hook_problems(self.agent, self.hooks, missing, fix, problems);
            return;
        };
        if !self.hooks.is_empty() {
            problems.push(Problem::new(
                format!(
                    "{agent}: the hook is installed twice, in {} and by the {} {}: the agent runs it twice on every event",
                    self.settings.display(),
                    package.kind,
                    package.name
                ),
                format!("{binary} hook uninstall --agent {agent}"),
            ));
        }
        if !missing.is_empty() {
            problems.push(Problem::new(
                format!(
                    "{agent}: the hook is not registered for {}",
                    missing.join(", ")
                ),
                fix.to_owned(),
            ));
        }
    }
}
