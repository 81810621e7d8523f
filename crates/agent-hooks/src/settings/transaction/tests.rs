use super::*;
use crate::settings::hook_command;

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    env: Environment,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = Environment::from_pairs([("HOME", home.as_os_str())]);
    World {
        _dir: dir,
        home,
        env,
    }
}

fn install(world: &World, agent: Agent, path: &Path) -> Installed {
    let program = world.home.join("bin/memrecall");
    let command = hook_command(agent, &program, None);
    Install::read(agent, path)
        .unwrap()
        .write(&program, &command, &world.env)
        .unwrap()
}

#[test]
fn an_uninstall_gives_back_the_bytes_the_install_found() {
    let world = world();
    let path = world.home.join(".claude/settings.json");
    let original = "{\n    \"model\":   \"opus\" ,\n\n  \"env\": {}\n}";
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, original).unwrap();

    let installed = install(&world, Agent::ClaudeCode, &path);
    assert_eq!(
        installed,
        Installed::Added {
            backup: Some(backup_path(&path)),
            restorable: true
        }
    );
    assert_ne!(std::fs::read_to_string(&path).unwrap(), original);

    let removed = uninstall(Agent::ClaudeCode, &path, None, &world.env).unwrap();

    assert_eq!(removed, Uninstalled::Restored);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert!(!backup_path(&path).exists());
}

#[test]
fn installing_twice_writes_nothing_the_second_time() {
    let world = world();
    let path = world.home.join(".codex/hooks.json");
    install(&world, Agent::Codex, &path);
    let first = std::fs::read_to_string(&path).unwrap();

    assert_eq!(
        install(&world, Agent::Codex, &path),
        Installed::AlreadyThere
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
}

#[test]
fn a_file_install_created_goes_with_its_folder() {
    let world = world();
    let path = world.home.join(".gemini/settings.json");
    install(&world, Agent::GeminiCli, &path);

    let removed = uninstall(Agent::GeminiCli, &path, None, &world.env).unwrap();

    assert_eq!(removed, Uninstalled::RemovedCreated);
    assert!(!path.parent().unwrap().exists());
}

#[test]
fn a_file_edited_since_install_keeps_the_edit_and_loses_the_entries() {
    let world = world();
    let path = world.home.join(".qwen/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{}\n").unwrap();
    install(&world, Agent::QwenCode, &path);
    let edited =
        std::fs::read_to_string(&path)
            .unwrap()
            .replacen('{', "{\n  \"theme\": \"dark\",", 1);
    std::fs::write(&path, &edited).unwrap();

    let removed = uninstall(Agent::QwenCode, &path, None, &world.env).unwrap();

    assert_eq!(
        removed,
        Uninstalled::EntriesRemoved {
            changed_since_install: true
        }
    );
    let left = std::fs::read_to_string(&path).unwrap();
    assert!(left.contains("\"theme\": \"dark\""), "{left}");
    assert!(!left.contains("memrecall"), "{left}");
}

#[test]
fn a_missing_file_has_nothing_to_remove() {
    let world = world();
    let path = world.home.join(".claude/settings.json");
    assert_eq!(
        uninstall(Agent::ClaudeCode, &path, None, &world.env).unwrap(),
        Uninstalled::NothingToRemove
    );
}

#[test]
fn every_recorded_file_and_every_user_settings_file_is_looked_at() {
    let world = world();
    let project = world.home.join("shop/.codex/hooks.json");
    install(&world, Agent::Codex, &project);
    let files = installed_files(&world.env);
    assert_eq!(files[0], project);
    assert_eq!(files.len(), 1 + Agent::ALL.len());
}

#[test]
fn a_projects_settings_file_belongs_to_the_agent_whose_folder_it_is_in() {
    let env = Environment::from_pairs([("HOME", "/home/ana")]);
    assert_eq!(
        agent_of(Path::new("/src/shop/.gemini/settings.json"), &env),
        Some(Agent::GeminiCli)
    );
    assert_eq!(
        agent_of(Path::new("/home/ana/.codex/hooks.json"), &env),
        Some(Agent::Codex)
    );
    assert_eq!(agent_of(Path::new("/src/shop/settings.json"), &env), None);
}
