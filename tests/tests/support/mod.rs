//! Running the real `memrecall` binary over memory trees written to temporary directories.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

/// An environment variable no test environment sets, so no API key is ever sent.
pub const UNSET_KEY_ENV: &str = "MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET";

/// A loopback model answering every chat completion (`/v1/chat/completions`) with `status` and
/// `body`, on a runtime of its own so that a test may stay synchronous.
pub fn loopback_model(status: u16, body: Value) -> (tokio::runtime::Runtime, wiremock::MockServer) {
    use wiremock::matchers::{method, path};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(async {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(wiremock::ResponseTemplate::new(status).set_body_json(body))
            .mount(&server)
            .await;
        server
    });
    (runtime, server)
}

/// The `memrecall` binary cargo built for these tests (they are test targets of the `memrecall`
/// package, so cargo builds it first and names it here).
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_memrecall"))
}

/// A memory tree in a fresh temporary directory: `project/` and `user/` roots, and `home/` as
/// the memory home so the user's real one is never read.
pub struct Tree {
    // Held so the directory lives, and is removed, with the tree.
    _dir: TempDir,
    base: PathBuf,
}

impl Tree {
    /// Empty project and user roots.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Canonical, so the paths the binary prints and sends match the ones the test expects
        // even when the temporary directory is reached through a symlink.
        let base = dir.path().canonicalize().unwrap();
        for sub in ["project", "user", "home"] {
            std::fs::create_dir(base.join(sub)).unwrap();
        }
        Self { _dir: dir, base }
    }

    /// The tree most tests share: three project topics, one user topic,
    /// one file without frontmatter and one with an unknown type.
    ///
    /// For the query `release checklist` the ranking is deploy (9), rollback (5); grafana and
    /// role do not match.
    pub fn standard() -> Self {
        let tree = Self::new();
        tree.project_topic(
            "deploy.md",
            "Deploy checklist",
            "Steps to ship a release to production",
            "project",
            "Run the smoke tests, then tag the release.",
        );
        tree.project_topic(
            "ops/rollback.md",
            "Rollback procedure",
            "Undo a bad release quickly",
            "project",
            "Revert the tag and redeploy the previous release. Then run the checklist again.",
        );
        tree.project_topic(
            "grafana.md",
            "Checkout dashboard",
            "Grafana board for checkout latency",
            "reference",
            "https://grafana.example/d/checkout",
        );
        tree.write("project/notes.md", "just some notes without frontmatter\n");
        tree.write(
            "project/draft.md",
            "---\nname: Draft\ntype: draft\n---\n\nNot a memory yet.\n",
        );
        tree.user_topic(
            "role.md",
            "Role",
            "Senior backend engineer who wants terse answers",
            "user",
            "",
        );
        tree
    }

    /// Moves every file's mtime an hour back (order kept), so recall treats the files as old
    /// enough for a persistent catalog to serve them.
    pub fn age_files(&self) {
        fn walk(dir: &Path) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_dir() {
                    walk(&entry.path());
                } else {
                    let file = std::fs::File::options()
                        .write(true)
                        .open(entry.path())
                        .unwrap();
                    let mtime = file.metadata().unwrap().modified().unwrap();
                    file.set_modified(mtime - std::time::Duration::from_hours(1))
                        .unwrap();
                }
            }
        }
        walk(&self.base);
    }

    /// The temporary directory, as the binary sees it.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The project root.
    pub fn project(&self) -> PathBuf {
        self.base.join("project")
    }

    /// The user root.
    pub fn user(&self) -> PathBuf {
        self.base.join("user")
    }

    /// Writes `content` at `relative` (to the temporary directory), creating parents.
    pub fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.base.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Writes a topic document under the project root.
    pub fn project_topic(
        &self,
        relative: &str,
        name: &str,
        description: &str,
        kind: &str,
        body: &str,
    ) -> PathBuf {
        self.write(
            &format!("project/{relative}"),
            &topic(name, description, kind, body),
        )
    }

    /// Writes a topic document under the user root.
    pub fn user_topic(
        &self,
        relative: &str,
        name: &str,
        description: &str,
        kind: &str,
        body: &str,
    ) -> PathBuf {
        self.write(
            &format!("user/{relative}"),
            &topic(name, description, kind, body),
        )
    }

    /// `--project <root> --user <root>`.
    pub fn root_args(&self) -> Vec<String> {
        vec![
            "--project".into(),
            self.project().display().to_string(),
            "--user".into(),
            self.user().display().to_string(),
        ]
    }

    /// Runs `memrecall` with `args`, from inside the tree.
    ///
    /// A `recall` whose initial point had nothing yet (its 100 ms of real time for the scan ran
    /// out, as on a stalled machine; no test expects that) is run again, for up to a minute.
    pub fn run<S: AsRef<str>>(&self, args: &[S]) -> Run {
        self.retry_until(
            || self.run_once(args),
            |run| !run.initial_point_had_nothing_yet(),
        )
    }

    /// `attempt` again and again, with the roots' catalogs put back as they were before each
    /// missed one, until `in_time` holds for its run; only a minute of misses fails, with the
    /// last run shown.
    fn retry_until(&self, attempt: impl Fn() -> Run, in_time: impl Fn(&Run) -> bool) -> Run {
        let deadline = std::time::Instant::now() + RETRY_DEADLINE;
        loop {
            let catalogs = self.save_catalogs();
            let run = attempt();
            if in_time(&run) {
                return run;
            }
            Self::restore_catalogs(catalogs);
            assert!(
                std::time::Instant::now() < deadline,
                "no run within {RETRY_DEADLINE:?} got its initial point in time; the last:\n\
                 stdout: {}\nstderr: {}",
                run.stdout,
                run.stderr
            );
            eprintln!("the initial point was missed (a stalled machine?); running again");
        }
    }

    /// Runs `memrecall` with `args` once, from inside the tree.
    fn run_once<S: AsRef<str>>(&self, args: &[S]) -> Run {
        self.run_once_with_env(args, &[])
    }

    /// Runs `memrecall` with `args` once, from inside the tree, with the variables `env` set.
    pub fn run_once_with_env<S: AsRef<str>>(&self, args: &[S], env: &[(&str, &str)]) -> Run {
        let output = Command::new(binary())
            .args(args.iter().map(AsRef::as_ref))
            .current_dir(&self.base)
            .env("MEMRECALL_HOME", self.base.join("home"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("RUST_LOG")
            .env_remove("MEMRECALL_LOG")
            .envs(env.iter().copied())
            .output()
            .expect("memrecall can be started");
        Run {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
            tree: self.base.display().to_string(),
        }
    }

    /// Runs `memrecall <command> <query> --project … --user … <extra>`.
    pub fn run_with_roots(&self, command: &str, query: &str, extra: &[&str]) -> Run {
        let mut args = vec![command.to_owned(), query.to_owned()];
        args.extend(self.root_args());
        args.extend(extra.iter().map(|&a| a.to_owned()));
        self.run(&args)
    }

    /// The files of the roots' state directories (under the memrecall home's `catalogs/`), to
    /// put back before a run is made again: the run that missed its initial point still wrote
    /// its catalogs, and the next must start from what the first one found.
    fn save_catalogs(&self) -> Vec<SavedDir> {
        let store = self.base.join("home").join("catalogs");
        let mut saved = vec![SavedDir {
            existed: store.is_dir(),
            dir: store.clone(),
            files: Vec::new(),
        }];
        let state_dirs = std::fs::read_dir(&store)
            .into_iter()
            .flatten()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_dir());
        for dir in state_dirs {
            let files = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .map(|entry| entry.unwrap().path())
                .filter(|path| path.is_file())
                .map(|path| {
                    let bytes = std::fs::read(&path).unwrap();
                    let permissions = std::fs::metadata(&path).unwrap().permissions();
                    (path, bytes, permissions)
                })
                .collect();
            saved.push(SavedDir {
                existed: true,
                dir,
                files,
            });
        }
        saved
    }

    /// Puts back what [`Tree::save_catalogs`] saved, and nothing else.
    fn restore_catalogs(saved: Vec<SavedDir>) {
        for SavedDir {
            dir,
            existed,
            files,
        } in saved
        {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            if existed {
                std::fs::create_dir_all(&dir).unwrap();
                // Private, as memrecall makes them (it refuses a state directory others may open).
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
                }
            }
            for (path, bytes, permissions) in files {
                std::fs::write(&path, bytes).unwrap();
                std::fs::set_permissions(&path, permissions).unwrap();
            }
        }
    }

    /// [`Tree::run_with_roots`] again and again until `in_time(&run)` holds, for up to a minute.
    ///
    /// A recall's initial point waits at most 100 ms of real time (the lifecycle's ceiling) for
    /// the scan and the model; a stalled machine can miss that, and the run then shows a different
    /// but correct outcome. A test whose subject comes after that wait states, as `in_time`, what
    /// the wait should have given and gets the first run where it did; only a minute of misses
    /// fails, with the last run shown.
    pub fn run_with_roots_until(
        &self,
        command: &str,
        query: &str,
        extra: &[&str],
        in_time: impl Fn(&Run) -> bool,
    ) -> Run {
        self.retry_until(|| self.run_with_roots(command, query, extra), in_time)
    }
}

/// A state directory as [`Tree::save_catalogs`] found it: whether it existed, and its files with
/// their bytes and permissions.
struct SavedDir {
    dir: PathBuf,
    existed: bool,
    files: Vec<(PathBuf, Vec<u8>, std::fs::Permissions)>,
}

/// How long [`Tree::run_with_roots_until`] keeps trying: far beyond any stall, only bounding a
/// hang.
const RETRY_DEADLINE: std::time::Duration = std::time::Duration::from_mins(1);

/// Whether a `--json` run's initial point delivered the fast result (the scan was published
/// within the initial wait, before the model answered).
pub fn initial_was_fast(run: &Run) -> bool {
    serde_json::from_str::<Value>(&run.stdout)
        .is_ok_and(|value| value["initial"]["phase"] == "fast" && !value["scan"].is_null())
}

/// Whether a `--json` run published its scan within the initial wait.
pub fn scan_was_published(run: &Run) -> bool {
    serde_json::from_str::<Value>(&run.stdout).is_ok_and(|value| !value["scan"].is_null())
}

fn topic(name: &str, description: &str, kind: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n")
}

/// One finished run of the binary.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`None` when a signal ended the process).
    pub code: Option<i32>,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    tree: String,
}

impl Run {
    /// Whether this was a `recall` whose initial point said the recall was still running.
    fn initial_point_had_nothing_yet(&self) -> bool {
        self.stdout
            .lines()
            .any(|line| line == "initial point: nothing yet (recall still running)")
            || serde_json::from_str::<Value>(&self.stdout)
                .is_ok_and(|value| value["initial"]["outcome"] == "pending")
    }

    /// Asserts a zero exit, showing stderr otherwise.
    pub fn success(&self) -> &Self {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        self
    }

    /// stdout parsed as JSON, with the temporary directory written as `[TREE]`.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout.replace(&self.tree, "[TREE]"))
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Asserts the run failed with `code` and a single `memrecall: …` line on stderr, and
    /// returns that line.
    pub fn one_line_failure(&self, code: i32) -> &str {
        assert_eq!(self.code, Some(code), "stderr: {}", self.stderr);
        self.no_panic();
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "stderr: {}", self.stderr);
        assert!(
            lines[0].starts_with("memrecall: "),
            "stderr: {}",
            self.stderr
        );
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        lines[0]
    }

    /// Asserts stderr shows no panic.
    pub fn no_panic(&self) {
        assert!(!self.stderr.contains("panicked"), "stderr: {}", self.stderr);
        assert!(
            !self.stderr.contains("RUST_BACKTRACE"),
            "stderr: {}",
            self.stderr
        );
    }
}

/// Snapshots `value` with every timing replaced by `[ms]` (a `null` timing stays `null`, since
/// whether a milestone happened is part of the behaviour).
pub fn assert_json_snapshot_without_timings(name: &str, value: &Value) {
    let mut settings = insta::Settings::clone_current();
    // Beside the test file rather than this module, named by the snapshot alone.
    // The test targets belong to `crates/memrecall`; their sources and snapshots sit in `tests/`.
    settings.set_snapshot_path(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/tests/snapshots"
    ));
    settings.set_prepend_module_to_snapshot(false);
    for selector in [
        ".scan_ms",
        ".timings_ms.scan",
        ".timings_ms.fast_published",
        ".timings_ms.selector",
        ".timings_ms.settled",
        ".initial.latency_ms",
        ".tool_result.latency_ms",
        ".end_of_turn.latency_ms",
        ".telemetry[].duration_ms",
        ".telemetry[].scan_duration_ms",
        ".telemetry[].fast_duration_ms",
        ".telemetry[].selector_duration_ms",
        ".telemetry[].latency_ms",
    ] {
        settings.add_dynamic_redaction(selector, |value, _| {
            if value.is_nil() { value } else { "[ms]".into() }
        });
    }
    // A state directory is named after its root's last name and a hash of the whole path, which
    // holds the temporary directory's name.
    settings.add_dynamic_redaction(".scan.catalogs[].path", |value, _| {
        let Some(path) = value.as_str() else {
            return value;
        };
        let redacted = match path.rsplit_once('/') {
            Some((dir, file)) => match dir.rsplit_once('-') {
                Some((named, hash)) if hash.len() == 16 => format!("{named}-[HASH]/{file}"),
                _ => path.to_owned(),
            },
            None => path.to_owned(),
        };
        redacted.into()
    });
    settings.bind(|| insta::assert_json_snapshot!(name, value));
}
