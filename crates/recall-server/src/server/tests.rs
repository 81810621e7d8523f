//! The server's unit tests: sessions, configuration reloads, memory figures.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use memory_scan::MemoryRoots;
use recall_facade::RecordingSink;
use recall_facade::{MemoryRecall, RecallConfig, TelemetrySink};

use super::sessions::{Entry, end_turn};
use super::status::{from_proc_status, rss_from_ps};
use super::{CountingSink, MAX_SESSIONS, ServeOptions, Server, lock};
use crate::protocol::{EventRequest, Point, PromptEvent};
use crate::{CONFIG_FILE_NAME, ConfigError, Program, ServerConfig, Telemetry};
use agent_hooks::{Agent, Environment, Layout, layout};

fn counting(recording: &Arc<RecordingSink>) -> CountingSink {
    CountingSink {
        inner: Arc::clone(recording) as Arc<dyn TelemetrySink>,
        ended: AtomicU64::new(0),
    }
}

#[tokio::test]
async fn a_turn_ended_with_its_recall_pending_emits_one_terminal_event() {
    let recording = Arc::new(RecordingSink::new());
    let sink = Arc::new(counting(&recording));
    let dir = tempfile::tempdir().unwrap();
    let mut config = RecallConfig::new(MemoryRoots {
        project: Some(dir.path().to_path_buf()),
        user: None,
    });
    config.telemetry = Arc::clone(&sink) as Arc<dyn TelemetrySink>;
    let mut entry = Entry::new();
    let mut recall = MemoryRecall::new(config).unwrap();
    recall.begin_turn("anything", &[]);
    entry.recall = Some(recall);
    entry.turn = Some("anything".into());
    let answer = end_turn(&mut entry);
    assert!(answer.turn_ended.is_some());
    assert_eq!(entry.turn, None);
    assert_eq!(sink.ended.load(Ordering::Relaxed), 1);
}

/// The program the tests run the server in: of the configuration file it reads the
/// `[serve] idle_exit` only; its telemetry goes to `tracing`.
#[derive(Debug)]
struct TestProgram;

static TEST_PROGRAM: TestProgram = TestProgram;

impl Program for TestProgram {
    fn server_config(&self, home: &Path) -> Result<ServerConfig, ConfigError> {
        let text = std::fs::read_to_string(home.join(CONFIG_FILE_NAME)).unwrap_or_default();
        let table: toml::Table = toml::from_str(&text).map_err(ConfigError::new)?;
        let idle_exit = table
            .get("serve")
            .and_then(|serve| serve.get("idle_exit"))
            .and_then(toml::Value::as_str)
            .map(humantime::parse_duration)
            .transpose()
            .map_err(ConfigError::new)?;
        Ok(ServerConfig {
            options: recall_facade::RecallOptions::default(),
            idle_exit,
        })
    }

    fn recall_options(&self, _: &Environment) -> Result<recall_facade::RecallOptions, ConfigError> {
        Ok(recall_facade::RecallOptions::default())
    }

    fn telemetry(&self, _: Option<&Path>) -> Telemetry {
        Telemetry {
            sink: Arc::new(recall_facade::TracingSink),
            history: None,
        }
    }

    fn trace_to(&self, _: &'static std::sync::Mutex<crate::log::Log>) {}
}

fn server_in(home: &Path) -> Server {
    let env = Environment::from_pairs([("MEMRECALL_HOME", home.as_os_str().to_owned())]);
    Server::new(&env, ServeOptions::default(), &TEST_PROGRAM)
}

/// A Qwen Code prompt event for the project directory `project`, read in memrecall's layout
/// under `home`.
fn prompt_in(home: &Path, project: &Path, session: &str, query: &str) -> EventRequest {
    EventRequest {
        agent: Agent::QwenCode,
        session: Some(session.to_owned()),
        point: Point::Initial(PromptEvent {
            query: query.to_owned(),
            repeat_is_continuation: true,
            cwd: project.to_path_buf(),
            layout: Some(Layout::Memrecall),
            env: [("MEMRECALL_HOME".to_owned(), home.display().to_string())].into(),
            selector_key: None,
        }),
    }
}

/// The project memory root memrecall's layout gives `project` under `home`, created.
fn memory_root(home: &Path, project: &Path) -> PathBuf {
    let env = Environment::from_pairs([("MEMRECALL_HOME", home.as_os_str().to_owned())]);
    let root = layout::resolve(Layout::Memrecall, project, &env)
        .unwrap()
        .project
        .path
        .unwrap();
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[tokio::test]
async fn a_full_table_evicts_the_least_recently_used_session() {
    let home = tempfile::tempdir().unwrap();
    let server = server_in(home.path());
    let key = |i: usize| (Agent::ClaudeCode, format!("s{i}"));
    for i in 0..MAX_SESSIONS {
        server.session(key(i), true).unwrap();
    }
    server.session(key(0), false).unwrap();

    server.session(key(MAX_SESSIONS), true).unwrap();

    let sessions = lock(&server.sessions);
    assert_eq!(sessions.slots.len(), MAX_SESSIONS);
    assert!(sessions.slots.contains_key(&key(0)));
    assert!(!sessions.slots.contains_key(&key(1)));
}

#[tokio::test]
async fn a_repeated_qwen_prompt_inside_the_turn_is_no_new_recall_but_after_the_turn_it_is() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    std::fs::write(
        memory_root(home.path(), project).join("deploy.md"),
        "---\nname: Deploy checklist\ndescription: Steps to ship\ntype: project\n---\n\nBody.\n",
    )
    .unwrap();
    let server = server_in(home.path());
    let prompt = || prompt_in(home.path(), project, "q", "deploy checklist");

    let first = server.event(prompt()).await;
    server.event(prompt()).await;
    let served_in_turn = server.served.load(Ordering::Relaxed);
    server
        .event(EventRequest {
            agent: Agent::QwenCode,
            session: Some("q".into()),
            point: Point::TurnEnd,
        })
        .await;
    server.event(prompt()).await;

    assert!(first.context.contains("Deploy checklist"), "{first:?}");
    assert_eq!(served_in_turn, 1);
    assert_eq!(server.served.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_prompt_with_a_relative_cwd_is_refused_and_recalls_nothing() {
    let home = tempfile::tempdir().unwrap();
    let server = server_in(home.path());

    let answer = server
        .event(prompt_in(home.path(), Path::new("../.."), "s", "anything"))
        .await;

    assert_eq!(answer.context, "");
    assert_eq!(server.served.load(Ordering::Relaxed), 0);
    assert!(lock(&server.caches).is_empty());
}

#[tokio::test]
async fn a_project_without_an_existing_memory_root_starts_no_recall_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = server_in(home.path());

    server
        .event(prompt_in(home.path(), project.path(), "s", "anything"))
        .await;

    assert_eq!(server.served.load(Ordering::Relaxed), 0);
    assert!(!home.path().join("projects").exists());
}

#[test]
fn a_changed_config_file_is_reloaded() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(CONFIG_FILE_NAME);
    std::fs::write(&config, "[serve]\nidle_exit = \"90s\"\n").unwrap();
    let server = server_in(home.path());
    let generation = lock(&server.settings).generation;

    std::fs::write(&config, "[serve]\nidle_exit = \"1h\"\n").unwrap();
    server.reload_if_changed(false);

    assert_eq!(lock(&server.settings).generation, generation + 1);
    assert_eq!(server.idle_exit(), Duration::from_hours(1));
}

#[cfg(target_os = "linux")]
#[test]
fn memory_figures_are_read_from_proc_on_linux() {
    let (rss, peak) = super::status::memory();
    assert!(
        rss.is_some_and(|r| r > 0) && peak >= rss,
        "{rss:?} {peak:?}"
    );
}

#[test]
fn resident_and_peak_memory_are_the_vmrss_and_vmhwm_lines_of_proc_status() {
    let status = "Name:\tmemrecall\nVmHWM:\t   61440 kB\nVmRSS:\t   51200 kB\nThreads:\t3\n";
    assert_eq!(from_proc_status(status), (Some(51_200), Some(61_440)));
}

#[test]
fn without_proc_the_resident_size_is_what_ps_prints_in_kib() {
    // `ps -o rss= -p PID` on macOS: the size right-aligned, no header.
    assert_eq!(rss_from_ps("  48732\n"), Some(48_732));
    assert_eq!(rss_from_ps(""), None);
}

#[tokio::test]
async fn a_prompt_answer_names_each_file_the_resolution_of_its_roots_ignored() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.local.json"),
        "{ not json",
    )
    .unwrap();
    let server = server_in(home.path());

    let answer = server
        .event(EventRequest {
            agent: Agent::ClaudeCode,
            session: Some("s".to_owned()),
            point: Point::Initial(PromptEvent {
                query: "deploy checklist".to_owned(),
                repeat_is_continuation: false,
                cwd: project.path().to_path_buf(),
                layout: None,
                env: [
                    ("HOME".to_owned(), home.path().display().to_string()),
                    (
                        "MEMRECALL_HOME".to_owned(),
                        home.path().display().to_string(),
                    ),
                ]
                .into(),
                selector_key: None,
            }),
        })
        .await;

    assert_eq!(answer.notices.len(), 1, "{:?}", answer.notices);
    assert!(
        answer.notices[0].starts_with("ignored: ") && answer.notices[0].contains("is not JSON"),
        "{:?}",
        answer.notices
    );
}
