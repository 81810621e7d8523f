//! `memrecall hook`, `roots` and `hook install` end to end: the real binary, each agent's exact
//! stdin JSON (with fields memrecall does not know), memory where each agent keeps it under a
//! temporary `HOME`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::binary;

mod doctor;
mod doctor_installed;
mod doctor_selector;
mod follow_agent;
#[cfg(unix)]
mod in_process;
mod install;
mod packages;
mod tracing;
mod uninstall;
mod user_root;

/// The binary `install` names in a hook entry: the one under test, by its canonical path.
fn installed_binary() -> PathBuf {
    binary().canonicalize().unwrap()
}

/// A temporary world: `home/` as `HOME`, `mr/` as `MEMRECALL_HOME`, and a git repository
/// `repo/`.
struct World {
    _dir: TempDir,
    base: PathBuf,
}

/// One finished hook (or other) run.
struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Finished {
    /// Asserts exit 0 and nothing on stdout.
    fn silent(&self) {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert_eq!(self.stdout, "", "stdout: {}", self.stdout);
    }

    /// Asserts exit 0 and returns the delivered context from the agent's JSON.
    fn context(&self, event: &str) -> String {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        let value: Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout));
        let output = &value["hookSpecificOutput"];
        assert_eq!(output["hookEventName"], event, "{value}");
        assert_eq!(value.as_object().unwrap().len(), 1, "{value}");
        output["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("no additionalContext in {value}"))
            .to_owned()
    }
}

/// The titles of the memories a context carries, in order.
fn titles(context: &str) -> Vec<String> {
    context
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|l| l.rsplit_once(" (").map_or(l, |(title, _)| title).to_owned())
        .collect()
}

/// Claude Code's and Qwen Code's directory name for a project path (ASCII paths).
fn dashed(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn topic(dir: &Path, file: &str, name: &str, description: &str, body: &str) {
    write(
        &dir.join(file),
        &topic_text(name, description, "project", body),
    );
}

impl Drop for World {
    /// A hook may have started the user's server in this world's home; it goes with the home.
    fn drop(&mut self) {
        if self.base.join("repo").is_dir() {
            let _ = self.run(&["stop"], "", &[]);
        }
    }
}

fn topic_text(name: &str, description: &str, kind: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n")
}

impl World {
    fn new() -> Self {
        Self::with_repo("repo")
    }

    /// A world whose repository is at `relative` (below the temporary directory).
    fn with_repo(relative: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["home", "mr", "tmp"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::fs::create_dir_all(base.join(relative).join(".git")).unwrap();
        std::fs::write(
            base.join(relative).join(".git/HEAD"),
            "ref: refs/heads/main\n",
        )
        .unwrap();
        let world = Self { _dir: dir, base };
        if relative != "repo" {
            std::fs::create_dir_all(world.base.join("repo/.git")).unwrap();
        }
        world
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// An executable file at `relative`, which `install --command` accepts; a test that needs a
    /// hook binary that is gone removes it after the install.
    fn executable(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        path
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    fn repo(&self) -> PathBuf {
        self.path("repo")
    }

    /// Claude Code's memory directory for a project.
    fn claude_memory(&self, project: &Path) -> PathBuf {
        self.home()
            .join(".claude/projects")
            .join(dashed(project))
            .join("memory")
    }

    /// Qwen Code's memory directory for a project.
    fn qwen_memory(&self, project: &Path) -> PathBuf {
        self.home()
            .join(".qwen/projects")
            .join(dashed(project))
            .join("memory")
    }

    /// Runs the binary with `args` from the repository, `stdin` written to it, and only `HOME`,
    /// `MEMRECALL_HOME` and `env` set.
    fn run(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Finished {
        self.run_in(&self.repo(), args, stdin, env)
    }

    /// [`World::run`] from the directory `cwd`.
    fn run_in(&self, cwd: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Finished {
        let mut child = Command::new(binary())
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.home())
            .env("MEMRECALL_HOME", self.path("mr"))
            // The system's temporary directory, where `install` refuses a binary, is the
            // world's own: a checkout that is itself under /tmp still installs.
            .env("TMPDIR", self.path("tmp"))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("memrecall can be started");
        let mut input = child.stdin.take().unwrap();
        // A hook that fails early may close stdin first; that is its business.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        Finished {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn hook(&self, agent: &str, stdin: &Value, env: &[(&str, &str)]) -> Finished {
        self.run(&["hook", "--agent", agent], &stdin.to_string(), env)
    }

    /// [`World::hook`] again and again until it delivers a context, for up to a minute.
    ///
    /// The hook prints what the recall's initial point gives within its 100 ms of real time; a
    /// stalled machine can miss that and the hook then, correctly, prints nothing. Tests that
    /// expect a delivery get the first run that was in time; a run that missed it has its
    /// remembered query forgotten, so that the next is not taken for a continuation. Only a
    /// minute of misses fails, with the last run shown.
    fn hook_delivering(&self, agent: &str, stdin: &Value, env: &[(&str, &str)]) -> Finished {
        let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
        loop {
            let run = self.hook(agent, stdin, env);
            if run.code != Some(0) || run.stdout.contains("additionalContext") {
                return run;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no hook run delivered within a minute; the last:\nstdout: {}\nstderr: {}",
                run.stdout,
                run.stderr
            );
            eprintln!("the hook delivered nothing (a stalled machine?); running it again");
            let _ = std::fs::remove_dir_all(self.path("mr/state"));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/hook.log")).unwrap_or_default()
    }
}

/// Claude Code's `UserPromptSubmit` input, with a field memrecall does not know.
fn claude_prompt(cwd: &Path, prompt: &str) -> Value {
    json!({
        "session_id": "abc123",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        "prompt_id": "p-1",
        "future_field": {"nested": true}
    })
}

/// The memories most tests recall from.
fn deploy_memories(dir: &Path) {
    topic(
        dir,
        "deploy.md",
        "Deploy checklist",
        "Steps to ship a release to production",
        "Run the smoke tests, then tag the release.",
    );
    topic(
        dir,
        "rollback.md",
        "Rollback procedure",
        "Undo a bad release quickly",
        "Revert the tag.",
    );
    topic(
        dir,
        "grafana.md",
        "Checkout dashboard",
        "Grafana board",
        "https://grafana.example/d/checkout",
    );
}

// ---------------------------------------------------------------------------------------------
// one test per agent

#[test]
fn claude_code_hook_delivers_the_projects_memory_as_additional_context() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    write(
        &world.claude_memory(&world.repo()).join("MEMORY.md"),
        "- index\n",
    );

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );

    let context = run.context("UserPromptSubmit");
    assert_eq!(titles(&context), ["Deploy checklist"]);
    assert!(context.contains("Saved today."), "{context}");
}

#[test]
fn qwen_code_hook_recalls_the_submitted_prompt_from_project_and_user_memory() {
    let world = World::new();
    qwen_own_recall_off(&world.home().join(".qwen"));
    deploy_memories(&world.qwen_memory(&world.repo()));
    write(
        &world.home().join(".qwen/memories/style.md"),
        &topic_text(
            "Release notes style",
            "Terse release notes",
            "feedback",
            "The checklist goes last.",
        ),
    );
    let stdin = json!({
        "session_id": "q1",
        "transcript_path": "/tmp/t.json",
        "cwd": world.repo(),
        "hook_event_name": "UserPromptSubmit",
        "timestamp": "2026-11-30T12:00:00Z",
        "prompt": "please look at @src/main.rs and the release checklist",
        "submitted_prompt": "release checklist",
        "unknown": [1, 2]
    });

    let run = world.hook_delivering("qwen-code", &stdin, &[]);

    let context = run.context("UserPromptSubmit");
    assert_eq!(
        titles(&context),
        ["Deploy checklist", "Release notes style"]
    );
}

#[test]
fn gemini_cli_hook_delivers_memrecall_memory_as_json() {
    let world = World::new();
    let project = world
        .path("mr/projects")
        .join(dashed(&world.repo()))
        .join("memory");
    deploy_memories(&project);
    let stdin = json!({
        "session_id": "g1",
        "transcript_path": "/tmp/g.json",
        "cwd": world.repo(),
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-11-30T12:00:00Z",
        "prompt": "release checklist",
        "llm_request": {"model": "gemini"}
    });

    let run = world.hook_delivering("gemini-cli", &stdin, &[]);

    let context = run.context("BeforeAgent");
    assert_eq!(titles(&context), ["Deploy checklist"]);
}

#[test]
fn codex_hook_delivers_memrecall_memory_as_additional_context() {
    let world = World::new();
    let project = world
        .path("mr/projects")
        .join(dashed(&world.repo()))
        .join("memory");
    deploy_memories(&project);
    let stdin = json!({
        "session_id": "c1",
        "transcript_path": null,
        "cwd": world.repo(),
        "hook_event_name": "UserPromptSubmit",
        "model": "gpt-5-codex",
        "turn_id": "t-9",
        "prompt": "release checklist",
        "permission_mode": "on-request"
    });

    let run = world.hook_delivering("codex", &stdin, &[]);

    let context = run.context("UserPromptSubmit");
    assert_eq!(titles(&context), ["Deploy checklist"]);
}

#[test]
fn a_chinese_prompt_without_spaces_recalls_a_chinese_titled_memory_through_claude_code() {
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    topic(
        &memory,
        "db.md",
        "数据库迁移脚本规范",
        "迁移脚本必须可以回滚",
        "每个迁移都要有对应的回滚脚本。",
    );
    topic(
        &memory,
        "deploy.md",
        "Deploy checklist",
        "Ship a release",
        "Tag it.",
    );

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "数据库迁移脚本应该怎么写？"),
        &[],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["数据库迁移脚本规范"]
    );
}

// ---------------------------------------------------------------------------------------------
// where memory is found

/// A linked worktree at `wt/` of the repository at `repo/`, as `git worktree add` leaves it.
fn add_worktree(world: &World) -> PathBuf {
    let admin = world.path("repo/.git/worktrees/wt");
    let wt = world.path("wt");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::create_dir_all(wt.join("src")).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(
        admin.join("gitdir"),
        format!("{}\n", wt.join(".git").display()),
    )
    .unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    wt
}

#[test]
fn claude_code_in_a_linked_worktree_reads_the_main_repositorys_memory() {
    let world = World::new();
    let wt = add_worktree(&world);
    deploy_memories(&world.claude_memory(&world.repo()));

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&wt.join("src"), "release checklist"),
        &[],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn qwen_code_in_a_linked_worktree_reads_the_worktrees_own_memory() {
    let world = World::new();
    qwen_own_recall_off(&world.home().join(".qwen"));
    let wt = add_worktree(&world);
    deploy_memories(&world.qwen_memory(&world.repo()));
    topic(
        &world.qwen_memory(&wt),
        "wt.md",
        "Worktree release checklist",
        "Only in the worktree",
        "",
    );
    let stdin =
        json!({"hook_event_name": "UserPromptSubmit", "cwd": wt, "prompt": "release checklist"});

    let run = world.hook_delivering("qwen-code", &stdin, &[]);

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Worktree release checklist"]
    );
}

#[test]
fn claude_code_project_path_over_200_characters_finds_the_hashed_directory_by_prefix() {
    let long = format!("deep/{}/repo", "a".repeat(230));
    let world = World::with_repo(&long);
    let project = world.path(&long);
    let name = dashed(&project);
    assert!(name.len() > 200);
    let memory = world
        .home()
        .join(".claude/projects")
        .join(format!("{}-1x2y3z", &name[..200]))
        .join("memory");
    deploy_memories(&memory);

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&project, "release checklist"),
        &[],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn a_project_path_with_dots_and_underscores_maps_them_to_dashes() {
    let world = World::with_repo("my_app.v2");
    let project = world.path("my_app.v2");
    let name = dashed(&project);
    assert!(name.ends_with("-my-app-v2"), "{name}");
    deploy_memories(
        &world
            .home()
            .join(".claude/projects")
            .join(name)
            .join("memory"),
    );

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&project, "release checklist"),
        &[],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn claude_code_project_dir_name_names_the_memory_directory() {
    let world = World::new();
    deploy_memories(&world.home().join(".claude/projects/chosen/memory"));

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[("CLAUDE_CODE_PROJECT_DIR_NAME", "chosen")],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn claude_code_disable_auto_memory_delivers_nothing() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));

    let run = world.hook(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")],
    );

    run.silent();
}

/// Turns Qwen Code's own memory recall off in the settings of the Qwen Code home `qwen` (kept
/// otherwise), so that memrecall's hook delivers the notes of Qwen Code's memory roots.
fn qwen_own_recall_off(qwen: &Path) {
    std::fs::create_dir_all(qwen).unwrap();
    let file = qwen.join("settings.json");
    let mut settings: Value = std::fs::read_to_string(&file)
        .map_or_else(|_| json!({}), |text| serde_json::from_str(&text).unwrap());
    settings["memory"] = json!({"enableManagedAutoMemory": false});
    std::fs::write(&file, settings.to_string()).unwrap();
}

#[test]
fn with_qwen_codes_own_recall_on_the_hook_leaves_its_notes_to_it() {
    let world = World::new();
    deploy_memories(&world.qwen_memory(&world.repo()));
    let stdin = json!({"hook_event_name": "UserPromptSubmit", "cwd": world.repo(), "prompt": "release checklist"});
    world.hook("qwen-code", &stdin, &[]).silent();
}

#[test]
fn qwen_home_moves_qwen_codes_memory() {
    let world = World::new();
    let moved = world.path("qhome");
    qwen_own_recall_off(&moved);
    deploy_memories(
        &moved
            .join("projects")
            .join(dashed(&world.repo()))
            .join("memory"),
    );
    let stdin = json!({"hook_event_name": "UserPromptSubmit", "cwd": world.repo(), "prompt": "release checklist"});

    let run = world.hook_delivering(
        "qwen-code",
        &stdin,
        &[("QWEN_HOME", moved.to_str().unwrap())],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn qwen_code_memory_local_reads_memory_inside_the_project() {
    let world = World::new();
    qwen_own_recall_off(&world.home().join(".qwen"));
    deploy_memories(&world.path("repo/.qwen/memory"));
    let stdin = json!({"hook_event_name": "UserPromptSubmit", "cwd": world.repo(), "prompt": "release checklist"});

    let run = world.hook_delivering("qwen-code", &stdin, &[("QWEN_CODE_MEMORY_LOCAL", "1")]);

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}

#[test]
fn roots_prints_the_resolved_directories_and_why() {
    let world = World::new();
    let run = world.run(&["roots", "--layout", "qwen-code"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let expected_project = format!(
        "project: {} (does not exist yet)",
        world.qwen_memory(&world.repo()).display()
    );
    assert!(
        run.stdout.lines().any(|l| l == expected_project),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "named after the git root {}",
            world.repo().display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn recall_with_a_layout_reads_that_agents_memory() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    let run = world.run(
        &[
            "rank",
            "release checklist",
            "--layout",
            "claude-code",
            "--json",
        ],
        "",
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["documents"], 3);
}

// ---------------------------------------------------------------------------------------------
// what is delivered

#[test]
fn a_newer_modified_time_ranks_first_and_gives_the_saved_age() {
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    write(
        &memory.join("old.md"),
        "---\nname: Release checklist old\ntype: project\nmodified: 2020-01-01T00:00:00.000Z\n---\nbody\n",
    );
    write(
        &memory.join("new.md"),
        "---\nname: Release checklist new\ntype: project\nmodified: 2021-01-01T00:00:00Z\n---\nbody\n",
    );
    // The file holding the older `modified` is the newer file.
    let older_file = std::fs::File::options()
        .write(true)
        .open(memory.join("new.md"))
        .unwrap();
    older_file
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_hours(48))
        .unwrap();

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );

    let context = run.context("UserPromptSubmit");
    assert_eq!(
        titles(&context),
        ["Release checklist new", "Release checklist old"]
    );
    // 2021-01-01T00:00:00Z; a day may turn while the hook runs.
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH + std::time::Duration::from_hours(447_072))
        .unwrap()
        .as_secs()
        / 86_400;
    let saved = context.lines().nth(5).unwrap_or_default().to_owned();
    assert!(
        saved == format!("Saved {days} days ago.")
            || saved == format!("Saved {} days ago.", days - 1),
        "{context}"
    );
}

#[test]
fn a_delivery_stays_under_ten_thousand_characters() {
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    for i in 0..5 {
        topic(
            &memory,
            &format!("big{i}.md"),
            &format!("Release checklist {i}"),
            &format!("release {}", "d".repeat(3_000)),
            &"b".repeat(1_200),
        );
    }

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );

    let context = run.context("UserPromptSubmit");
    assert!(
        context.chars().count() < 10_000,
        "{}",
        context.chars().count()
    );
    assert!(!titles(&context).is_empty());
}

#[test]
fn a_prompt_of_100000_characters_is_recalled_for() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    let prompt = format!("release checklist {}", "lorem ipsum ".repeat(8_400));
    assert!(prompt.chars().count() > 100_000);

    let run = world.hook_delivering("claude-code", &claude_prompt(&world.repo(), &prompt), &[]);

    assert!(titles(&run.context("UserPromptSubmit")).contains(&"Deploy checklist".to_owned()));
}

#[test]
fn a_selector_that_never_answers_still_gets_the_fast_result_delivered() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    topic(
        &world.claude_memory(&world.repo()),
        "third.md",
        "Release calendar",
        "When each version ships",
        "Each date has its checklist.",
    );
    // Accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    write(
        &world.path("mr/config.toml"),
        &format!(
            "[selector]\nkind = \"http\"\nurl = \"http://{address}\"\nmodel = \"m\"\napi_key_env = \"MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET\"\n"
        ),
    );

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );

    // The fast result: the lexical top two, not the settled top three.
    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Deploy checklist", "Release calendar"]
    );
}

// ---------------------------------------------------------------------------------------------
// never in the way

#[test]
fn malformed_stdin_exits_0_silently_and_logs_why() {
    let world = World::new();
    let run = world.run(&["hook", "--agent", "claude-code"], "{\"prompt\": ", &[]);
    run.silent();
    assert!(
        world.log().contains("claude-code: stdin is not JSON"),
        "{}",
        world.log()
    );
}

#[test]
fn empty_stdin_exits_0_silently_and_logs_why() {
    let world = World::new();
    let run = world.run(&["hook", "--agent", "codex"], "", &[]);
    run.silent();
    assert!(
        world.log().contains("codex: stdin is empty"),
        "{}",
        world.log()
    );
}

#[test]
fn a_missing_memory_directory_delivers_nothing() {
    let world = World::new();
    let run = world.hook(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );
    run.silent();
}

#[test]
fn gemini_cli_with_nothing_to_deliver_gets_an_empty_object() {
    let world = World::new();
    let stdin =
        json!({"hook_event_name": "BeforeAgent", "cwd": world.repo(), "prompt": "anything"});
    let run = world.hook("gemini-cli", &stdin, &[]);
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stdout.trim(), "{}");
}

#[test]
fn the_tool_result_event_prints_nothing() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    let stdin = json!({
        "session_id": "abc", "cwd": world.repo(), "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}
    });
    world.hook("claude-code", &stdin, &[]).silent();
}

#[test]
fn an_unknown_event_prints_nothing() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    let stdin = json!({"cwd": world.repo(), "hook_event_name": "Notification", "prompt": "release checklist"});
    world.hook("claude-code", &stdin, &[]).silent();
}

#[test]
fn a_qwen_code_continuation_repeating_the_prompt_is_not_a_new_query() {
    let world = World::new();
    qwen_own_recall_off(&world.home().join(".qwen"));
    deploy_memories(&world.qwen_memory(&world.repo()));
    let stdin = json!({
        "session_id": "q7", "cwd": world.repo(), "hook_event_name": "UserPromptSubmit",
        "prompt": "release checklist"
    });
    let first = world.hook_delivering("qwen-code", &stdin, &[]);
    assert!(!titles(&first.context("UserPromptSubmit")).is_empty());

    world.hook("qwen-code", &stdin, &[]).silent();
}

/// A Qwen Code prompt event of session `q8`.
#[cfg(unix)]
fn qwen_prompt(cwd: &Path, prompt: &str) -> Value {
    json!({
        "session_id": "q8", "prompt_id": "q8########1", "cwd": cwd,
        "hook_event_name": "UserPromptSubmit", "prompt": prompt
    })
}

#[cfg(unix)]
#[test]
fn a_qwen_code_continuation_recalled_in_process_never_delivers_a_document_again() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::new();
    qwen_own_recall_off(&world.home().join(".qwen"));
    deploy_memories(&world.qwen_memory(&world.repo()));
    // A run directory others may open is refused: every prompt is recalled in the hook.
    let run = world.path("mr/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prompt = qwen_prompt(&world.repo(), "release checklist");
    let first = world.hook_delivering("qwen-code", &prompt, &[]);
    assert!(!titles(&first.context("UserPromptSubmit")).is_empty());

    world
        .hook("qwen-code", &qwen_prompt(&world.repo(), ""), &[])
        .silent();
    world.hook("qwen-code", &prompt, &[]).silent();
    let tool = json!({"session_id": "q8", "hook_event_name": "PostToolUse", "tool_name": "ls"});
    world.hook("qwen-code", &tool, &[]).silent();
    world
        .hook(
            "qwen-code",
            &json!({"session_id": "q8", "hook_event_name": "Stop"}),
            &[],
        )
        .silent();
    let next_turn = world.hook_delivering("qwen-code", &prompt, &[]);

    assert!(!titles(&next_turn.context("UserPromptSubmit")).is_empty());
    assert!(
        world.log().contains("refusing the server socket"),
        "{}",
        world.log()
    );
}

#[test]
fn a_bad_hook_command_line_exits_0_and_logs_it() {
    let world = World::new();
    let run = world.run(&["hook", "--agent", "vim"], "{}", &[]);
    run.silent();
    assert!(world.log().contains("bad command line"), "{}", world.log());
}

#[test]
fn an_invalid_config_file_makes_recall_exit_4_naming_the_key() {
    let world = World::new();
    write(
        &world.path("mr/config.toml"),
        "[selector]\nkind = \"http\"\nmodel = \"m\"\n",
    );
    let run = world.run(&["recall", "release checklist"], "", &[]);
    assert_eq!(run.code, Some(4), "{}", run.stderr);
    assert!(run.stderr.contains("selector.url"), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// install and uninstall

#[test]
fn install_prints_the_snippet_without_touching_any_file() {
    let world = World::new();
    let run = world.run(&["hook", "install", "--agent", "codex"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook --agent codex", installed_binary().display())
    );
    assert!(!world.home().join(".codex").exists());
}

#[test]
fn install_write_twice_adds_one_entry_and_uninstall_removes_exactly_it() {
    let world = World::new();
    let settings = world.home().join(".claude/settings.json");
    let original = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    write(&settings, original);
    let install = ["hook", "install", "--agent", "claude-code", "--write"];

    assert_eq!(world.run(&install, "", &[]).code, Some(0));
    assert_eq!(world.run(&install, "", &[]).code, Some(0));
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = format!("{} hook --agent claude-code", installed_binary().display());
    assert_eq!(
        merged["hooks"]["UserPromptSubmit"],
        json!([{"hooks": [{"type": "command", "command": command, "timeout": 10}]}])
    );
    assert_eq!(merged["model"], "opus");
    assert_eq!(
        std::fs::read_to_string(settings.with_file_name("settings.json.memrecall-backup")).unwrap(),
        original
    );

    let run = world.run(&["hook", "uninstall", "--agent", "claude-code"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
}

#[test]
fn install_write_into_a_project_creates_its_settings_file() {
    let world = World::new();
    let run = world.run(
        &[
            "hook",
            "install",
            "--agent",
            "qwen-code",
            "--write",
            "--project",
            world.repo().to_str().unwrap(),
        ],
        "",
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(world.path("repo/.qwen/settings.json")).unwrap(),
    )
    .unwrap();
    assert!(written["hooks"]["UserPromptSubmit"].is_array(), "{written}");
}

#[cfg(unix)]
#[test]
fn install_write_keeps_the_files_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::new();
    let settings = world.home().join(".gemini/settings.json");
    write(&settings, "{}\n");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();

    let run = world.run(
        &["hook", "install", "--agent", "gemini-cli", "--write"],
        "",
        &[],
    );

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mode = std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn an_unparsable_settings_file_is_left_untouched() {
    let world = World::new();
    let settings = world.home().join(".qwen/settings.json");
    let broken = "{ \"model\": \"x\", // a comment\n";
    write(&settings, broken);

    let run = world.run(
        &["hook", "install", "--agent", "qwen-code", "--write"],
        "",
        &[],
    );

    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("left untouched"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), broken);
    assert!(
        !settings
            .with_file_name("settings.json.memrecall-backup")
            .exists()
    );
}

// ---------------------------------------------------------------------------------------------
// the delivery rule, through the hook

/// Copies the project memories of `corpus/demo` to `dir`.
fn demo_project_memories(dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/demo/project");
    for relative in [
        "changelog-style.md",
        "ci/pipeline.md",
        "dashboards.md",
        "integration-tests.md",
        "oncall-rota.md",
        "redis-cache.md",
        "release-rollback.md",
        "running-tests.md",
        "staging-notes.md",
    ] {
        write(
            &dir.join(relative),
            &std::fs::read_to_string(source.join(relative)).unwrap(),
        );
    }
}

#[test]
fn claude_code_gets_the_runbook_alone_for_the_rollback_question_and_nothing_for_chatter() {
    let world = World::new();
    demo_project_memories(&world.claude_memory(&world.repo()));

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "how do we roll back a release?"),
        &[],
    );
    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Release rollback runbook"]
    );
    // The same world has just delivered in time, so a silent run below is the rule's doing.
    for chatter in [
        "fix the typo in the README",
        "thanks, looks good",
        "format the code please",
    ] {
        world
            .hook("claude-code", &claude_prompt(&world.repo(), chatter), &[])
            .silent();
    }
}

#[test]
fn a_trim_of_none_in_config_toml_gives_claude_code_the_designs_top_five() {
    let world = World::new();
    demo_project_memories(&world.claude_memory(&world.repo()));
    write(
        &world.path("mr/config.toml"),
        "[delivery]\ntrim = \"none\"\n",
    );

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "how do we roll back a release?"),
        &[],
    );

    let titles = titles(&run.context("UserPromptSubmit"));
    assert_eq!(titles.len(), 5, "{titles:?}");
    assert_eq!(titles[0], "Release rollback runbook");
}

/// Copies every project memory of `corpus/payments-team` to `dir`, keeping its folders.
fn payments_team_project_memories(dir: &Path) {
    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else if entry.path().extension().is_some_and(|e| e == "md") {
                write(&target, &std::fs::read_to_string(entry.path()).unwrap());
            }
        }
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/payments-team/project");
    copy(&source, dir);
}

#[test]
fn on_the_payments_team_tree_everyday_prompts_deliver_nothing_and_run_the_tests_again_delivers_the_test_conventions()
 {
    let world = World::new();
    payments_team_project_memories(&world.claude_memory(&world.repo()));

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "run the tests again"),
        &[],
    );
    let delivered = titles(&run.context("UserPromptSubmit"));
    assert_eq!(
        delivered.first().map(String::as_str),
        Some("Test conventions")
    );
    // The same world has just delivered in time, so a silent run below is the rule's doing.
    for chatter in [
        "make this code more readable",
        "format the code please",
        "what does this error mean",
    ] {
        world
            .hook("claude-code", &claude_prompt(&world.repo(), chatter), &[])
            .silent();
    }
}

#[test]
fn on_the_payments_team_tree_a_weak_match_is_named_in_one_line_and_no_note_is_delivered() {
    let world = World::new();
    payments_team_project_memories(&world.claude_memory(&world.repo()));
    for prompt in [
        "handle the error case when the file is missing",
        "コードをきれいにして",
    ] {
        let run = world.hook_delivering("claude-code", &claude_prompt(&world.repo(), prompt), &[]);
        let context = run.context("UserPromptSubmit");
        assert_eq!(
            titles(&context),
            Vec::<String>::new(),
            "{prompt}: {context}"
        );
        assert!(
            context.starts_with("## Possibly relevant memory"),
            "{prompt}: {context}"
        );
        assert_eq!(
            context.lines().filter(|l| l.starts_with("- ")).count(),
            1,
            "{prompt}: {context}"
        );
    }
}
