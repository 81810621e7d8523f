//! The session table: one recall session per agent session, bounded with least-recently-used
//! eviction, each over a document cache shared by the sessions of the same roots; and what each
//! hook event delivers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use memory_scan::{MemoryRoots, Scope};
use memory_watch::WatchedCache;
use recall_facade::{Delivery, MemoryRecall, RecallConfig, ScannerChoice, TelemetrySink};

use super::{
    MAX_IDLE_CACHES, MAX_SESSIONS, Server, UNWATCH_AFTER, document_cache, lock, log, millis,
};
use crate::protocol::{DeliveryAnswer, EventRequest, Point, PromptEvent};
use agent_hooks::layout::{self, RecallRoots};
use agent_hooks::memory_uri::MemoryUri;
use agent_hooks::{Agent, Environment};

/// The roots a session recalls from and where their catalogs go: what its document cache is
/// shared by.
pub(super) type RootsKey = RecallRoots;
pub(super) type SessionKey = (Agent, String);

/// One agent session.
pub(super) struct Entry {
    pub(super) recall: Option<MemoryRecall>,
    pub(super) roots: RootsKey,
    pub(super) generation: u64,
    /// The query of the open turn, until the turn ends.
    pub(super) turn: Option<String>,
    /// The latest settled recall already checked for a selector failure.
    pub(super) reported: Option<Arc<recall_facade::SettledRecall>>,
}

impl Entry {
    pub(super) fn new() -> Self {
        Self {
            recall: None,
            roots: RecallRoots {
                project: None,
                user: None,
                catalogs: None,
            },
            generation: 0,
            turn: None,
            reported: None,
        }
    }
}

pub(super) struct Slot {
    pub(super) used: u64,
    pub(super) entry: Arc<tokio::sync::Mutex<Entry>>,
}

#[derive(Default)]
pub(super) struct Sessions {
    pub(super) slots: HashMap<SessionKey, Slot>,
    pub(super) clock: u64,
}

impl Server {
    pub(super) async fn event(&self, event: EventRequest) -> DeliveryAnswer {
        let Some(session) = event.session else {
            return match event.point {
                Point::Initial(prompt) => {
                    let mut entry = Entry::new();
                    let answer = self.prompt(&mut entry, event.agent, prompt).await;
                    if let Some(recall) = entry.recall.take() {
                        recall.shutdown();
                    }
                    answer
                }
                Point::ToolResult(_) | Point::TurnEnd | Point::SessionEnd => {
                    DeliveryAnswer::default()
                }
            };
        };
        let key = (event.agent, session);
        if let Point::SessionEnd = event.point {
            let slot = lock(&self.sessions).slots.remove(&key);
            let Some(slot) = slot else {
                return DeliveryAnswer::default();
            };
            let mut entry = slot.entry.lock().await;
            let mut ended = end_turn(&mut entry);
            ended.notices = self.notices(&mut entry);
            if let Some(recall) = entry.recall.take() {
                recall.shutdown();
            }
            return ended;
        }
        let Some(slot) = self.session(key, matches!(event.point, Point::Initial(_))) else {
            return DeliveryAnswer::default();
        };
        let mut entry = slot.lock().await;
        let mut answer = match event.point {
            Point::Initial(prompt) => self.prompt(&mut entry, event.agent, prompt).await,
            Point::ToolResult(tool) => {
                note_fetched(&mut entry, &tool.fetched);
                tool_result(&mut entry)
            }
            Point::TurnEnd => end_turn(&mut entry),
            Point::SessionEnd => DeliveryAnswer::default(),
        };
        answer.notices.extend(self.notices(&mut entry));
        answer
    }

    /// The session's entry, created when `create` (evicting the least recently used one when
    /// full).
    pub(super) fn session(
        &self,
        key: SessionKey,
        create: bool,
    ) -> Option<Arc<tokio::sync::Mutex<Entry>>> {
        let mut sessions = lock(&self.sessions);
        sessions.clock += 1;
        let now = sessions.clock;
        if let Some(slot) = sessions.slots.get_mut(&key) {
            slot.used = now;
            return Some(Arc::clone(&slot.entry));
        }
        if !create {
            return None;
        }
        if sessions.slots.len() >= MAX_SESSIONS {
            let oldest = sessions
                .slots
                .iter()
                .min_by_key(|(_, slot)| slot.used)
                .map(|(key, _)| key.clone());
            if let Some(evicted) = oldest.and_then(|key| sessions.slots.remove(&key)) {
                tokio::spawn(async move {
                    let mut entry = evicted.entry.lock().await;
                    if let Some(recall) = entry.recall.take() {
                        recall.shutdown();
                    }
                });
            }
        }
        let entry = Arc::new(tokio::sync::Mutex::new(Entry::new()));
        sessions.slots.insert(
            key,
            Slot {
                used: now,
                entry: Arc::clone(&entry),
            },
        );
        Some(entry)
    }

    /// The roots a prompt event recalls from, resolved here with the hook's own code from what
    /// the agent gave the client: the one resolution of a served prompt (the hook resolves none
    /// of its own). `None` (and one logged reason) when there is nothing to read; each file the
    /// resolution ignored goes into `notices`, for the hook's log.
    fn roots_for(
        &self,
        agent: Agent,
        prompt: &PromptEvent,
        notices: &mut Vec<String>,
    ) -> Option<RootsKey> {
        if !prompt.cwd.is_absolute() {
            self.log_refusal(&format!(
                "refused a prompt event: its cwd {} is not absolute",
                escaped_path(&prompt.cwd)
            ));
            return None;
        }
        let env = Environment::from_named(prompt.env.clone());
        let layout = prompt.layout.unwrap_or(agent_hooks::default_layout(agent));
        let mut resolved = match layout::resolve(layout, &prompt.cwd, &env) {
            Ok(resolved) => resolved,
            Err(error) => {
                self.log_refusal(&format!("refused a prompt event: {error}"));
                return None;
            }
        };
        agent_hooks::qwen_code::leave_own_recall(agent, &mut resolved, &env);
        for ignored in &resolved.ignored {
            let line = format!("ignored: {ignored}");
            self.log_refusal(&line);
            notices.push(line);
        }
        let mut roots = resolved.recall_roots(self.home.as_deref());
        for root in [&mut roots.project, &mut roots.user] {
            let Some(path) = root.as_deref() else {
                continue;
            };
            let refusal = if !path.is_absolute() {
                Some("it is not absolute")
            } else if !path.is_dir() {
                Some("it is not an existing directory")
            } else {
                None
            };
            if let Some(why) = refusal {
                self.log_refusal(&format!(
                    "not reading the memory root {}: {why}",
                    escaped_path(path)
                ));
                *root = None;
            }
        }
        (roots.project.is_some() || roots.user.is_some()).then_some(roots)
    }

    /// Logs `line` the first time it is seen (a missing root is refused on every prompt; once in
    /// the log is enough), keeping at most a bounded number of lines in mind.
    pub(super) fn log_refusal(&self, line: &str) {
        const REMEMBERED: usize = 1024;
        let mut logged = lock(&self.refusals_logged);
        if logged.contains(line) {
            return;
        }
        if logged.len() >= REMEMBERED {
            logged.clear();
        }
        logged.insert(line.to_owned());
        log(line);
    }

    async fn prompt(&self, entry: &mut Entry, agent: Agent, prompt: PromptEvent) -> DeliveryAnswer {
        if prompt.query.trim().is_empty() {
            return DeliveryAnswer::default();
        }
        // Qwen Code fires its prompt event before each continuation: inside an open turn, the
        // same query again is the tool-result point, not a new recall.
        if prompt.repeat_is_continuation && entry.turn.as_deref() == Some(prompt.query.as_str()) {
            return tool_result(entry);
        }
        if let Some(key) = &prompt.selector_key {
            self.offer_key(key);
        }
        let mut notices = Vec::new();
        let Some(roots) = self.roots_for(agent, &prompt, &mut notices) else {
            return DeliveryAnswer {
                notices,
                ..DeliveryAnswer::default()
            };
        };
        let (generation, options) = {
            let settings = lock(&self.settings);
            (settings.generation, settings.options.clone())
        };
        let rebuild =
            entry.recall.is_none() || entry.roots != roots || entry.generation != generation;
        if rebuild {
            if let Some(old) = entry.recall.take() {
                old.shutdown();
            }
            let mut config = RecallConfig::new(MemoryRoots {
                project: roots.project.clone(),
                user: roots.user.clone(),
            });
            config.options = options;
            config.options.context_budget = agent_hooks::context::budget();
            config.telemetry = Arc::clone(&self.sink) as Arc<dyn TelemetrySink>;
            config.scanner = ScannerChoice::Shared(self.cache_for(&roots));
            // The options' selector was built with the configuration's generation and the limit
            // is the default, so this is not expected to fail; if it does, the call delivers
            // nothing and says why in the log.
            let recall = match MemoryRecall::new(config) {
                Ok(recall) => recall,
                Err(error) => {
                    log(&format!("cannot start a recall session: {error}"));
                    return DeliveryAnswer {
                        notices,
                        ..DeliveryAnswer::default()
                    };
                }
            };
            entry.roots = roots;
            entry.generation = generation;
            entry.recall = Some(recall);
        }
        let Some(recall) = entry.recall.as_mut() else {
            return DeliveryAnswer {
                notices,
                ..DeliveryAnswer::default()
            };
        };
        recall.begin_turn(&prompt.query, &[]);
        self.served.fetch_add(1, Ordering::Relaxed);
        let delivery = recall.initial().await;
        for line in walk_limits(recall) {
            self.log_refusal(&line);
        }
        entry.turn = Some(prompt.query);
        DeliveryAnswer {
            context: context_of(&delivery),
            fast_ms: fast_ms(recall),
            notices,
            ..DeliveryAnswer::default()
        }
    }

    fn cache_for(&self, roots: &RootsKey) -> Arc<WatchedCache> {
        let mut caches = lock(&self.caches);
        if let Some(cache) = caches.get(roots) {
            return Arc::clone(cache);
        }
        let unused = caches
            .values()
            .filter(|c| Arc::strong_count(c) == 1)
            .count();
        if unused >= MAX_IDLE_CACHES {
            caches.retain(|_, cache| Arc::strong_count(cache) > 1);
        }
        let cache = document_cache(roots.catalogs.clone(), &self.watcher);
        caches.insert(roots.clone(), Arc::clone(&cache));
        cache
    }

    /// Stops watching roots no recall has scanned for [`UNWATCH_AFTER`]; a later recall of one
    /// watches it again.
    pub(super) fn unwatch_idle_roots(&self) {
        let caches: Vec<_> = lock(&self.caches).values().cloned().collect();
        for cache in caches {
            for root in cache.unwatch_idle(UNWATCH_AFTER) {
                log(&format!("stopped watching {} (idle)", root.display()));
            }
        }
    }
}

/// Marks the memories a tool showed the model as delivered in the session, each looked up under
/// the root of its scope (a URI names a document below a root, never a place of its own).
fn note_fetched(entry: &mut Entry, fetched: &[MemoryUri]) {
    let Entry { recall, roots, .. } = entry;
    let Some(recall) = recall.as_mut() else {
        return;
    };
    let paths = fetched.iter().filter_map(|uri| {
        let root = match uri.scope() {
            Scope::Project => roots.project.as_deref(),
            Scope::User => roots.user.as_deref(),
        }?;
        uri.path_under(root)
    });
    recall.note_shown_elsewhere(paths);
}

fn tool_result(entry: &mut Entry) -> DeliveryAnswer {
    let Some(recall) = entry.recall.as_mut() else {
        return DeliveryAnswer::default();
    };
    DeliveryAnswer {
        context: context_of(&recall.after_tool_result()),
        fast_ms: fast_ms(recall),
        ..DeliveryAnswer::default()
    }
}

/// When the latest recall had its first result, in milliseconds from its start: its fast
/// result, or its settled one when it settled without publishing one first (no selector). Also
/// after the initial ceiling, which a large cold tree can pass.
fn fast_ms(recall: &MemoryRecall) -> Option<f64> {
    let state = recall.latest_recall()?;
    if let Some(fast) = &state.fast {
        return Some(millis(fast.published_after));
    }
    state.settled.map(|settled| {
        millis(
            settled
                .timings
                .fast_published
                .unwrap_or(settled.timings.settled),
        )
    })
}

pub(super) fn end_turn(entry: &mut Entry) -> DeliveryAnswer {
    entry.turn = None;
    let ended = match entry.recall.as_mut().map(MemoryRecall::end_turn) {
        Some(Delivery::Discarded(reason)) => reason.as_str().to_owned(),
        Some(Delivery::Delivered(_)) => "delivered".to_owned(),
        Some(Delivery::Pending) => "pending".to_owned(),
        Some(Delivery::Idle) | None => "none".to_owned(),
    };
    DeliveryAnswer {
        turn_ended: Some(ended),
        ..DeliveryAnswer::default()
    }
}

fn context_of(delivery: &Delivery) -> String {
    delivery
        .delivered()
        .map(|memory| memory.prompt.clone())
        .unwrap_or_default()
}

/// What the walk's limits left out of the last recall's scan, one log line each (nothing before
/// that scan is done).
pub(crate) fn walk_limits(recall: &recall_facade::MemoryRecall) -> Vec<String> {
    let Some(scanned) = recall.latest_recall().and_then(|state| state.scanned) else {
        return Vec::new();
    };
    scanned
        .report
        .skipped
        .iter()
        .filter_map(|skip| {
            let limit = skip.reason.limit_text()?;
            Some(format!(
                "{}: {limit}; what the limits allow is still read",
                escaped_path(&skip.path)
            ))
        })
        .collect()
}

/// A path as one printable line (lossy where it is not UTF-8), for the log.
fn escaped_path(path: &std::path::Path) -> String {
    recall_facade::printable(&path.display().to_string(), recall_facade::Lines::Escaped)
        .into_owned()
}
