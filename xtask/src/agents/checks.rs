//! The verdicts, from what a run left behind: the model requests, and what each hook process
//! printed.

use std::time::Duration;

use serde_json::Value;

use super::Verdict;
use super::model::{LIST_TOOL, RECALL_TOOL};
use super::requests::{Api, mentions, occurrences, offered_tools, tool_names, tool_results};

/// Unique strings only the memory files hold.
pub struct Markers {
    /// In the English migrations memory.
    pub en: String,
    /// In the Chinese-titled memory.
    pub zh: String,
    /// In a memory only the model selector picks for the English prompt.
    pub picked: String,
}

impl Markers {
    pub fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let unique = nanos ^ std::process::id();
        Self {
            en: format!("ORCHARD-{unique:08x}"),
            zh: format!("LANTERN-{unique:08x}"),
            picked: format!("HARBOUR-{unique:08x}"),
        }
    }
}

/// One `memrecall hook` process the agent ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// When it started, in milliseconds from the agent's start.
    pub at_ms: u64,
    /// Its wall time in milliseconds.
    pub wall_ms: f64,
    /// The event the agent named in its input (`hook_event_name`).
    pub event: String,
    /// What it printed.
    pub out: String,
}

impl Hook {
    /// Whether the event ends a turn or a session (nothing it prints reaches the model).
    fn is_end(&self) -> bool {
        matches!(self.event.as_str(), "Stop" | "AfterAgent" | "SessionEnd")
    }
}

/// What one headless run left behind.
pub struct Outcome {
    api: Api,
    /// The model requests, in order.
    bodies: Vec<Value>,
    /// Each `memrecall hook` process, in the order they started.
    hooks: Vec<Hook>,
    /// When the agent started, in nanoseconds since the Unix epoch.
    started_ns: u128,
    elapsed: Duration,
    exit: String,
}

impl Outcome {
    pub fn new(
        api: Api,
        bodies: Vec<Value>,
        hooks: Vec<Hook>,
        (started_ns, elapsed): (u128, Duration),
        exit: String,
    ) -> Self {
        Self {
            api,
            bodies,
            hooks,
            started_ns,
            elapsed,
            exit,
        }
    }

    /// `at_ns` (nanoseconds since the Unix epoch) in milliseconds from the agent's start.
    pub fn ms_from_start(&self, at_ns: u128) -> u64 {
        u64::try_from(at_ns.saturating_sub(self.started_ns) / 1_000_000).unwrap_or(u64::MAX)
    }

    /// The main conversation's requests: those offering the most tools (side requests, such
    /// as titles, classifiers and an agent's own memory picker, offer none or one).
    fn main_requests(&self) -> Vec<&Value> {
        let count = |body: &Value| offered_tools(self.api, body).len();
        let most = self.bodies.iter().map(count).max().unwrap_or(0);
        self.bodies
            .iter()
            .filter(|body| most > 0 && count(body) == most)
            .collect()
    }

    /// How many hook outputs mention `marker`.
    fn hooks_delivering(&self, marker: &str) -> usize {
        self.hooks
            .iter()
            .filter(|hook| hook.out.contains(marker))
            .count()
    }

    /// The hook processes' wall times, for the report.
    pub fn hook_summary(&self) -> String {
        match self.hooks.as_slice() {
            [] => "no hook ran".into(),
            [first, rest @ ..] => {
                let first = first.wall_ms;
                let max = rest.iter().map(|h| h.wall_ms).fold(first, f64::max);
                let calls = self.hooks.len();
                format!("{first:.0} ms first, {max:.0} max, {calls} calls")
            }
        }
    }

    fn took(&self) -> String {
        format!("run {:.1} s, {}", self.elapsed.as_secs_f64(), self.exit)
    }

    fn no_main_request(&self) -> (Verdict, String) {
        let n = self.bodies.len();
        let detail = format!("no request offered tools ({n} requests); {}", self.took());
        (Verdict::Fail, detail)
    }
}

/// The marker reaches the model with the first request of the conversation, delivered by the
/// hook (not only by the agent's own recall).
pub fn first_prompt(outcome: &Outcome, marker: &str) -> (Verdict, String) {
    let main = outcome.main_requests();
    let Some(first) = main.first() else {
        return outcome.no_main_request();
    };
    let by_hook = outcome.hooks_delivering(marker) > 0;
    match (mentions(first, marker), by_hook) {
        // More than once: something (the agent's own recall) delivered the same memory too.
        (true, true) => match occurrences(first, marker) {
            1 => (Verdict::Pass, outcome.took()),
            n => {
                let took = outcome.took();
                (
                    Verdict::Fail,
                    format!("{took}; the memory {n}× in the first request"),
                )
            }
        },
        (in_request, by_hook) => (
            Verdict::Fail,
            format!(
                "marker in the first request: {in_request}, in a hook's output: {by_hook}; {}",
                outcome.took()
            ),
        ),
    }
}

/// The prompt reached the model: the conversation's first request carries `words` of it, and
/// the agent's `output` does not say it blocked the prompt.
pub fn prompt_reached(outcome: &Outcome, words: &str, output: &str) -> (Verdict, String) {
    let blocked = output
        .lines()
        .find(|line| line.to_lowercase().contains("blocked"))
        .map(|line| format!("; the agent said: {}", clip(line.trim())));
    let main = outcome.main_requests();
    let Some(first) = main.first() else {
        let (verdict, detail) = outcome.no_main_request();
        return (verdict, detail + blocked.as_deref().unwrap_or(""));
    };
    let n = outcome.bodies.len();
    match (mentions(first, words), blocked) {
        (true, None) => (
            Verdict::Pass,
            format!(
                "prompt in the first request ({n} requests); {}",
                outcome.took()
            ),
        ),
        (carried, blocked) => (
            Verdict::Fail,
            format!(
                "prompt in the first request: {carried}{}; {}",
                blocked.unwrap_or_default(),
                outcome.took()
            ),
        ),
    }
}

/// Both read tools of memrecall's MCP server are offered to the model.
pub fn mcp_listed(outcome: &Outcome) -> (Verdict, String) {
    let main = outcome.main_requests();
    let Some(first) = main.first() else {
        return outcome.no_main_request();
    };
    let names = tool_names(outcome.api, first);
    let ours: Vec<&String> = names
        .iter()
        .filter(|name| name.ends_with(RECALL_TOOL) || name.ends_with(LIST_TOOL))
        .collect();
    if ours.len() == 2 {
        let listed: Vec<&str> = ours.iter().map(|name| name.as_str()).collect();
        (Verdict::Pass, listed.join(", "))
    } else {
        (Verdict::Fail, format!("offered: {}", names.join(", ")))
    }
}

/// The scripted `recall_memories` call came back to the model with the memory's text.
pub fn mcp_call(outcome: &Outcome, marker: &str) -> (Verdict, String) {
    let results: Vec<String> = outcome
        .main_requests()
        .iter()
        .flat_map(|body| tool_results(outcome.api, body))
        .collect();
    if results.iter().any(|result| result.contains(marker)) {
        (Verdict::Pass, "the tool result holds the memory".into())
    } else if let Some(first) = results.first() {
        let clipped = clip(first);
        (
            Verdict::Fail,
            format!("tool result without the memory: {clipped}"),
        )
    } else {
        (
            Verdict::Fail,
            "no tool result came back to the model".into(),
        )
    }
}

/// With the agent's own memory recall on (Qwen Code's managed auto-memory), the memory reaches
/// the first request exactly once, and not from memrecall's hook, which leaves those roots to
/// the agent.
pub fn own_recall_once(outcome: &Outcome, marker: &str) -> (Verdict, String) {
    let main = outcome.main_requests();
    let Some(first) = main.first() else {
        return outcome.no_main_request();
    };
    let times = occurrences(first, marker);
    let by_hook = outcome.hooks_delivering(marker);
    let detail = format!(
        "the memory {times}× in the first request, printed by {by_hook} memrecall hook(s); {}",
        outcome.took()
    );
    let pass = times == 1 && by_hook == 0;
    (if pass { Verdict::Pass } else { Verdict::Fail }, detail)
}

/// The model called `recall_memories` and its result holds the memory only the selector picks
/// (`marker`); the tool-result hook that ran after the selector answered does not deliver it
/// again: no hook printed it, and the last request holds it no more often than its tool
/// results do. `answered_ms` is when the selector first answered, from the agent's start.
pub fn fetched_once(
    outcome: &Outcome,
    marker: &str,
    asked: usize,
    answered_ms: Option<u64>,
) -> (Verdict, String) {
    let main = outcome.main_requests();
    let Some(last) = main.last() else {
        return outcome.no_main_request();
    };
    let in_results: usize = tool_results(outcome.api, last)
        .iter()
        .map(|result| result.matches(marker).count())
        .sum();
    let in_last = occurrences(last, marker);
    let by_hook = outcome.hooks_delivering(marker);
    let tool_hook = outcome
        .hooks
        .iter()
        .skip(1)
        .find(|hook| !hook.is_end())
        .map(|hook| hook.at_ms);
    let after_answer = matches!((answered_ms, tool_hook), (Some(a), Some(t)) if t >= a);
    let detail = format!(
        "selector asked {asked}×, first answer at {answered_ms:?} ms, first tool-result hook at \
         {tool_hook:?} ms; the memory in the tool results {in_results}×, in the last request \
         {in_last}×, printed by {by_hook} hook(s)"
    );
    let pass = asked > 0 && after_answer && in_results > 0 && in_last == in_results && by_hook == 0;
    (if pass { Verdict::Pass } else { Verdict::Fail }, detail)
}

/// With a selector answering after the first prompt's budget, its remaining pick reaches the
/// model after the first tool call, handed over by a tool-result hook, and no document is
/// delivered twice: the selector was asked; the pick is not in the first request but is in a
/// later one; exactly one hook printed the pick, and it was not the prompt's hook; exactly one
/// hook printed the lexical memory; and neither marker occurs more often in the last request
/// than where it first arrived (no hook repeated it). `answered_ms` is when the selector first
/// answered, from the agent's start: the detail says whether the first tool result came after
/// it, which is what lets the pick land.
pub fn refined(
    outcome: &Outcome,
    markers: &Markers,
    asked: usize,
    answered_ms: Option<u64>,
) -> (Verdict, String) {
    let main = outcome.main_requests();
    let Some((first, later)) = main.split_first() else {
        return outcome.no_main_request();
    };
    let early = mentions(first, &markers.picked);
    let arrived = later.iter().find(|body| mentions(body, &markers.picked));
    let last = main.last().copied().unwrap_or(first);
    let repeated = |marker: &str, at: &Value| occurrences(last, marker) > occurrences(at, marker);
    let repeats =
        arrived.is_some_and(|at| repeated(&markers.picked, at)) || repeated(&markers.en, first);
    let picked_by: Vec<&Hook> = outcome
        .hooks
        .iter()
        .filter(|hook| hook.out.contains(&markers.picked))
        .collect();
    let prompt_hook = outcome.hooks.first();
    let by_tool_result = matches!(picked_by.as_slice(), [hook] if Some(*hook) != prompt_hook);
    let lexical_by = outcome.hooks_delivering(&markers.en);
    let tool_result = outcome.hooks.iter().skip(1).find(|hook| !hook.is_end());
    let timing = match (answered_ms, tool_result) {
        (Some(answered), Some(hook)) => format!(
            "selector answered at {answered} ms, first tool result hook at {} ms ({} {})",
            hook.at_ms,
            hook.event,
            if hook.at_ms >= answered {
                "after"
            } else {
                "BEFORE: the pick had no later point"
            }
        ),
        (None, _) => "the selector never answered".into(),
        (_, None) => "no tool-result hook ran".into(),
    };
    let event = picked_by.first().map_or("none", |hook| hook.event.as_str());
    let detail = format!(
        "{timing}; selector asked {asked}×; pick in 1st request: {early}, later: {}, \
         printed by {} hook(s) ({event}); lexical memory printed by {lexical_by}; \
         repeated in the last request: {repeats}",
        arrived.is_some(),
        picked_by.len()
    );
    let pass =
        asked > 0 && !early && arrived.is_some() && by_tool_result && lexical_by == 1 && !repeats;
    (if pass { Verdict::Pass } else { Verdict::Fail }, detail)
}

/// Installed as the agent's own package (`installed` says how), memrecall reached the model:
/// the marker in the first request from a hook, and the MCP tools offered.
pub fn package(outcome: &Outcome, marker: &str, installed: &str) -> (Verdict, String) {
    let (prompt, prompt_detail) = first_prompt(outcome, marker);
    let (listed, listed_detail) = mcp_listed(outcome);
    let verdict = if prompt == Verdict::Pass && listed == Verdict::Pass {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let prompt_detail = if prompt == Verdict::Pass {
        "first prompt delivered".to_owned()
    } else {
        prompt_detail
    };
    (
        verdict,
        format!("{installed}; {prompt_detail}; MCP: {listed_detail}"),
    )
}

/// `memrecall doctor`, run where the agent's package is installed and working, says healthy:
/// exit 0 and no problem.
pub fn doctor_healthy(code: Option<i32>, stdout: &str) -> (Verdict, String) {
    let problems: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("problems:"))
        .collect();
    let healthy = code == Some(0)
        && problems
            .first()
            .is_some_and(|l| l.trim() == "problems: none");
    let detail = if healthy {
        "exit 0, problems: none".to_owned()
    } else {
        format!("exit {code:?}; {}", clip(&problems.join(" / ")))
    };
    (
        if healthy {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail,
    )
}

/// The agent printed no warning about memrecall's hooks (Codex warns, for instance, when a hook's
/// timeout is over its limit): no warning line names a hook's file, timeout or command. The
/// warning that the sandbox's own `--dangerously-bypass-hook-trust` flag is on is not one.
pub fn no_hook_warning(output: &str) -> (Verdict, String) {
    let warnings: Vec<&str> = output
        .lines()
        .filter(|line| {
            let line = line.to_lowercase();
            line.contains("warn")
                && line.contains("hook")
                && !line.contains("--dangerously-bypass-hook-trust")
                && ["hooks.json", "timeout", "memrecall"]
                    .iter()
                    .any(|word| line.contains(word))
        })
        .collect();
    match warnings.first() {
        None => (Verdict::Pass, "no warning about a hook".into()),
        Some(first) => (
            Verdict::Fail,
            format!("{} line(s), the first: {}", warnings.len(), clip(first)),
        ),
    }
}

/// The settings file after `uninstall` is the file before `install`, byte for byte (absent if it
/// was absent). `agent_changed` says the agent itself rewrote it between the two.
pub fn uninstall(
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    agent_changed: bool,
) -> (Verdict, String) {
    let by_agent = if agent_changed {
        " (the agent itself also rewrote the file while it ran)"
    } else {
        ""
    };
    match (before, after) {
        (None, None) => (Verdict::Pass, "created by install, removed".into()),
        (Some(b), Some(a)) if a == b => (Verdict::Pass, "byte-identical".into()),
        (None, Some(a)) => {
            let left = clip(&String::from_utf8_lossy(a));
            (
                Verdict::Fail,
                format!("created by install, left behind: {left}{by_agent}"),
            )
        }
        (Some(_), None) => (
            Verdict::Fail,
            format!("the settings file is gone{by_agent}"),
        ),
        (Some(b), Some(a)) => {
            let same = b.iter().zip(a).take_while(|(x, y)| x == y).count();
            let (nb, na) = (b.len(), a.len());
            let detail =
                format!("{nb} bytes before, {na} after, first difference at byte {same}{by_agent}");
            (Verdict::Fail, detail)
        }
    }
}

/// One line of the hook timing log (`<start ns> <end ns> <arguments>`) of a
/// `memrecall hook --agent …` process: its start and wall time in milliseconds. Other
/// invocations (`hook install`, …) give `None`.
pub fn hook_line(line: &str) -> Option<(u64, f64)> {
    let mut fields = line.splitn(3, ' ');
    let start: u64 = fields.next()?.parse().ok()?;
    let end: u64 = fields.next()?.parse().ok()?;
    if !fields.next()?.starts_with("hook --agent") {
        return None;
    }
    Some((start, end.checked_sub(start)? as f64 / 1e6))
}

fn clip(text: &str) -> String {
    let clipped: String = text.trim().chars().take(80).collect();
    clipped.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn markers() -> Markers {
        Markers {
            en: "EN-1".into(),
            zh: "ZH-1".into(),
            picked: "PICK-1".into(),
        }
    }

    fn request(text: &str) -> Value {
        json!({"tools": [{"name": "a"}, {"name": "b"}], "messages": [{"role": "user", "content": text}]})
    }

    fn outcome(bodies: Vec<Value>, hooks: &[&str]) -> Outcome {
        let events = ["UserPromptSubmit", "PostToolUse", "Stop"];
        let hooks = hooks
            .iter()
            .zip(events.iter().cycle())
            .zip(0..)
            .map(|((out, event), i)| Hook {
                at_ms: 400 * i,
                wall_ms: 10.0,
                event: (*event).to_owned(),
                out: (*out).to_owned(),
            })
            .collect();
        Outcome::new(
            Api::Anthropic,
            bodies,
            hooks,
            (0, Duration::ZERO),
            "exit 0".into(),
        )
    }

    #[test]
    fn side_requests_with_fewer_tools_are_not_the_conversation() {
        let side = json!({"tools": [{"name": "respond_in_schema"}], "messages": []});
        let run = outcome(vec![side, request("EN-1")], &["EN-1"]);
        assert_eq!(first_prompt(&run, "EN-1").0, Verdict::Pass);
    }

    #[test]
    fn a_marker_the_hook_never_printed_does_not_count() {
        let run = outcome(vec![request("EN-1")], &[""]);
        assert_eq!(first_prompt(&run, "EN-1").0, Verdict::Fail);
    }

    #[test]
    fn the_pick_must_arrive_after_the_first_request_from_one_hook() {
        let m = markers();
        let good = outcome(
            vec![request("EN-1"), request("EN-1 PICK-1")],
            &["EN-1", "PICK-1", ""],
        );
        assert_eq!(refined(&good, &m, 1, Some(300)).0, Verdict::Pass);
        let repeated = outcome(
            vec![request("EN-1"), request("EN-1 PICK-1")],
            &["EN-1", "EN-1 PICK-1"],
        );
        assert_eq!(refined(&repeated, &m, 1, Some(300)).0, Verdict::Fail);
        let never = outcome(vec![request("EN-1"), request("EN-1")], &["EN-1", ""]);
        assert_eq!(refined(&never, &m, 1, Some(300)).0, Verdict::Fail);
    }

    #[test]
    fn a_pick_the_prompt_hook_printed_is_not_a_refined_remainder() {
        let run = outcome(
            vec![request("EN-1"), request("EN-1 PICK-1")],
            &["EN-1 PICK-1", ""],
        );
        assert_eq!(refined(&run, &markers(), 1, Some(300)).0, Verdict::Fail);
    }

    #[test]
    fn a_memory_occurring_more_often_in_the_last_request_is_a_repeat() {
        let run = outcome(
            vec![
                request("EN-1"),
                request("EN-1 PICK-1"),
                request("EN-1 PICK-1 PICK-1"),
            ],
            &["EN-1", "PICK-1", ""],
        );
        let (verdict, detail) = refined(&run, &markers(), 1, Some(300));
        assert_eq!(verdict, Verdict::Fail);
        assert!(
            detail.contains("repeated in the last request: true"),
            "{detail}"
        );
    }

    #[test]
    fn the_detail_says_when_the_tool_result_came_before_the_selector_answered() {
        let run = outcome(vec![request("EN-1"), request("EN-1")], &["EN-1", "", ""]);
        let (verdict, detail) = refined(&run, &markers(), 1, Some(900));
        assert_eq!(verdict, Verdict::Fail);
        assert!(detail.contains("at 400 ms (PostToolUse BEFORE"), "{detail}");
    }

    #[test]
    fn doctor_is_healthy_only_with_exit_0_and_no_problem() {
        let healthy = "hook: installed\nproblems: none\n";
        assert_eq!(doctor_healthy(Some(0), healthy).0, Verdict::Pass);
        assert_eq!(doctor_healthy(Some(1), healthy).0, Verdict::Fail);
        let sick = "problems:\n- mcp: not registered\n";
        assert_eq!(doctor_healthy(Some(0), sick).0, Verdict::Fail);
    }

    #[test]
    fn a_line_warning_about_a_hook_fails() {
        let codex = "warning: clamping SessionEnd hook timeout to 3s in /h/.codex/hooks.json\nok";
        assert_eq!(no_hook_warning(codex).0, Verdict::Fail);
        assert_eq!(
            no_hook_warning("warning: slow network\nhook ran").0,
            Verdict::Pass
        );
        let flag = "warning: `--dangerously-bypass-hook-trust` is enabled. Enabled hooks may run";
        assert_eq!(no_hook_warning(flag).0, Verdict::Pass);
    }

    #[test]
    fn uninstall_must_restore_bytes_or_absence() {
        assert_eq!(uninstall(None, None, false).0, Verdict::Pass);
        assert_eq!(uninstall(Some(b"{}"), Some(b"{}"), false).0, Verdict::Pass);
        assert_eq!(uninstall(None, Some(b"{}"), false).0, Verdict::Fail);
        let (verdict, detail) = uninstall(Some(b"{ }"), Some(b"{}"), false);
        assert_eq!(verdict, Verdict::Fail);
        assert!(detail.contains("first difference at byte 1"), "{detail}");
    }

    #[test]
    fn hook_lines_give_start_and_wall_time_of_hook_runs_only() {
        assert_eq!(
            hook_line("1000000 13500000 hook --agent codex"),
            Some((1_000_000, 12.5))
        );
        assert_eq!(hook_line("1 2 hook install --agent codex"), None);
        assert_eq!(hook_line("garbage"), None);
    }
}
