//! The server within the limits a user's system may set: an address-space cap and many projects
//! served at once.

use std::process::Command;

use super::{World, prompt_event, titles, topic};

/// The address space the server is given: 1 GiB.
const ADDRESS_SPACE: &str = "--as=1073741824";
/// The projects one server serves at once.
const PROJECTS: usize = 64;

fn prlimit_available() -> bool {
    Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[test]
fn a_server_under_a_one_gib_address_space_serves_sixty_four_projects_without_aborting() {
    if !prlimit_available() {
        eprintln!("not run: prlimit (util-linux) is not installed");
        return;
    }
    let mut world = World::new();
    let repos: Vec<_> = (0..PROJECTS)
        .map(|i| {
            let repo = world.repo(&format!("projects/p{i}"));
            let memory = world.claude_memory(&repo);
            topic(
                &memory,
                "deploy.md",
                &format!("Deploy runbook {i}"),
                "How this project ships",
            );
            repo
        })
        .collect();
    // `memrecall serve` as the world runs it, under prlimit.
    let server = world.command(&["serve"]);
    let mut limited = Command::new("prlimit");
    limited
        .arg(ADDRESS_SPACE)
        .arg(server.get_program())
        .args(server.get_args())
        .current_dir(world.path("repo"))
        .env_clear()
        .envs(server.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let pid = world.spawn_server(limited);

    let delivered: Vec<bool> = repos
        .iter()
        .enumerate()
        .map(|(i, repo)| {
            let context = world.hook(
                "claude-code",
                &prompt_event(&format!("s{i}"), repo, "how does this project deploy?"),
            );
            titles(&context) == [format!("Deploy runbook {i}")]
        })
        .collect();
    let status = world.status().expect("the server still answers");

    assert_eq!(status["pid"].as_u64(), Some(pid), "the server was replaced");
    assert!(delivered.iter().all(|d| *d), "{delivered:?}");
    assert_eq!(
        status["sessions"].as_u64(),
        Some(PROJECTS as u64),
        "{status}"
    );
}
