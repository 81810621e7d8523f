use super::*;

fn world() -> (tempfile::TempDir, Environment) {
    let dir = tempfile::tempdir().unwrap();
    let env = Environment::from_pairs([("HOME", dir.path().as_os_str())]);
    (dir, env)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn an_mcp_entry_is_found_in_a_project_of_claude_json() {
    let value = serde_json::json!({"projects": {"/p": {"mcpServers": {"memrecall": {}}}}});
    assert!(has_json_mcp_entry(&value));
    let other = serde_json::json!({"mcpServers": {"git": {}}});
    assert!(!has_json_mcp_entry(&other));
}

#[test]
fn each_agents_mcp_registration_is_read_from_its_own_file() {
    let (home, env) = world();
    let home = home.path();
    write(
        &home.join(".claude.json"),
        r#"{"projects":{"/p":{"mcpServers":{"memrecall":{"command":"/a/memrecall"}}}}}"#,
    );
    write(
        &home.join(".gemini/settings.json"),
        "// mine\n{\"mcpServers\": {\"memrecall\": {\"command\": \"/b/memrecall\"}}}\n",
    );
    write(
        &home.join(".codex/config.toml"),
        "[mcp_servers.memrecall]\ncommand = \"/c/memrecall\"\n",
    );
    let found = |agent| mcp_registration(agent, &env).map(|entry| entry.command);
    assert_eq!(found(Agent::ClaudeCode).as_deref(), Some("/a/memrecall"));
    assert_eq!(found(Agent::GeminiCli).as_deref(), Some("/b/memrecall"));
    assert_eq!(found(Agent::Codex).as_deref(), Some("/c/memrecall"));
    assert_eq!(found(Agent::QwenCode), None);
    assert_eq!(
        mcp_registration(Agent::Codex, &env).unwrap().file,
        home.join(".codex/config.toml")
    );
}

#[test]
fn the_mcp_fix_is_the_agents_own_command_or_the_edit_of_its_file() {
    let file = Path::new("/h/.codex/config.toml");
    assert_eq!(
        mcp_fix(Agent::ClaudeCode, "/bin/memrecall", file),
        "claude mcp remove memrecall; claude mcp add memrecall -- /bin/memrecall mcp --agent claude-code --read-only"
    );
    assert_eq!(
        mcp_fix(Agent::Codex, "/bin/memrecall", file),
        "set mcp_servers.memrecall.command = \"/bin/memrecall\" in /h/.codex/config.toml"
    );
    assert_eq!(
        mcp_fix(
            Agent::QwenCode,
            "/bin/memrecall",
            Path::new("/h/.qwen/settings.json")
        ),
        "set mcpServers.memrecall.command to \"/bin/memrecall\" in /h/.qwen/settings.json"
    );
}

#[test]
fn the_agents_own_registrations_are_named_with_the_agents_own_commands() {
    let (home, env) = world();
    let home = home.path();
    write(
        &home.join(".claude/plugins/installed_plugins.json"),
        r#"{"plugins":{"memrecall@memrecall":[]}}"#,
    );
    write(
        &home.join(".claude.json"),
        r#"{"mcpServers":{"memrecall":{}}}"#,
    );
    std::fs::create_dir_all(home.join(".qwen/extensions/memrecall")).unwrap();
    write(
        &home.join(".codex/config.toml"),
        "[mcp_servers.memrecall]\ncommand = \"memrecall\"\n",
    );
    assert_eq!(
        own_registrations(Agent::ClaudeCode, &env),
        [
            "claude plugin uninstall memrecall@memrecall",
            "claude mcp remove memrecall"
        ]
    );
    assert_eq!(
        own_registrations(Agent::QwenCode, &env),
        ["qwen extensions uninstall memrecall"]
    );
    assert_eq!(
        own_registrations(Agent::Codex, &env),
        ["codex mcp remove memrecall"]
    );
    assert!(own_registrations(Agent::GeminiCli, &env).is_empty());
}

#[cfg(unix)]
#[test]
fn a_registration_file_that_is_a_fifo_is_not_waited_on() {
    let (home, env) = world();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    crate::test_support::make_fifo(&home.path().join(".codex/config.toml"));
    assert_eq!(mcp_registration(Agent::Codex, &env), None);
    assert!(own_registrations(Agent::Codex, &env).is_empty());
}
