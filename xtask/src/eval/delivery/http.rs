//! The delivery evaluation over real HTTP: the shipped selector against a loopback model
//! server that always picks the relevant documents.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use recall_lifecycle::{DeliveryDesign, DeliveryRule};
use selector::Selector;
use selector_http::{HttpSelector, HttpSelectorConfig};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::super::corpus::Corpus;
use super::{
    CorpusHandle, DESIGNS, HTTP_LATENCIES_MS, HTTP_STAGGER, ScenarioRow, TurnCase, TurnKind,
    TurnOutcome, row, run_turn, run_turn_with,
};

pub(super) fn http_scenarios(corpus: &Corpus, cases: &[TurnCase]) -> Result<Vec<ScenarioRow>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not build the real-time runtime")?;
    runtime.block_on(async {
        let answers: HashMap<String, Vec<String>> = cases
            .iter()
            .map(|c| (c.query.clone(), c.answer.clone()))
            .collect();
        let mut rows = Vec::new();
        // The servers must outlive every turn that talks to them.
        let mut servers = Vec::with_capacity(HTTP_LATENCIES_MS.len());
        let mut selectors: Vec<(u64, Arc<dyn Selector>)> = Vec::new();
        for latency_ms in HTTP_LATENCIES_MS {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(PerfectModel {
                    answers: answers.clone(),
                    latency: Duration::from_millis(latency_ms),
                })
                .mount(&server)
                .await;
            let selector: Arc<dyn Selector> = Arc::new(
                HttpSelector::with_api_key(HttpSelectorConfig::new(server.uri(), "eval"), None)
                    .context("could not build the HTTP selector")?,
            );
            servers.push(server);

            // A tool-free turn ends within the 100 ms initial wait, so these simply run in turn.
            for design in DESIGNS {
                let mut outcomes = Vec::with_capacity(cases.len());
                for case in cases {
                    let selector = Arc::clone(&selector);
                    let turn = run_turn(corpus, selector, design, TurnKind::ToolFree, case);
                    outcomes.push(turn.await);
                }
                rows.push(row(
                    "http",
                    latency_ms,
                    TurnKind::ToolFree,
                    design,
                    &outcomes,
                ));
            }
            selectors.push((latency_ms, selector));
        }

        // Every tool-using turn waits 5 s for its tool result: run them all side by side.
        let mut turns = tokio::task::JoinSet::new();
        let scheduled = selectors.iter().flat_map(|(latency_ms, selector)| {
            DESIGNS.into_iter().flat_map(move |design| {
                cases
                    .iter()
                    .map(move |case| (*latency_ms, selector, design, case))
            })
        });
        for (i, (latency_ms, selector, design, case)) in scheduled.enumerate() {
            let handle = CorpusHandle::of(corpus);
            let selector = Arc::clone(selector);
            let case = case.clone();
            let start = HTTP_STAGGER.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX));
            turns.spawn(async move {
                tokio::time::sleep(start).await;
                let rule = DeliveryRule::UNTRIMMED;
                let outcome =
                    run_turn_with(&handle, selector, design, rule, TurnKind::ToolUsing, &case)
                        .await;
                (latency_ms, design, outcome)
            });
        }
        let mut by_scenario: HashMap<(u64, DeliveryDesign), Vec<TurnOutcome>> = HashMap::new();
        while let Some(joined) = turns.join_next().await {
            let (latency_ms, design, outcome) = joined.context("a tool-using turn panicked")?;
            by_scenario
                .entry((latency_ms, design))
                .or_default()
                .push(outcome);
        }
        for latency_ms in HTTP_LATENCIES_MS {
            for design in DESIGNS {
                let outcomes = by_scenario
                    .remove(&(latency_ms, design))
                    .unwrap_or_default();
                rows.push(row(
                    "http",
                    latency_ms,
                    TurnKind::ToolUsing,
                    design,
                    &outcomes,
                ));
            }
        }
        drop(servers);
        // Stable: within one latency and turn kind, the designs stay in report order.
        rows.sort_by_key(|r| (r.latency_ms, r.turn));
        Ok(rows)
    })
}

/// A model server that always picks exactly the relevant documents of the query it is asked.
struct PerfectModel {
    answers: HashMap<String, Vec<String>>,
    latency: Duration,
}

impl Respond for PerfectModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let chosen = query_of(&request.body)
            .and_then(|query| self.answers.get(&query))
            .cloned()
            .unwrap_or_default();
        let content = json!({ "selected_memories": chosen }).to_string();
        ResponseTemplate::new(200)
            .set_delay(self.latency)
            .set_body_json(json!({
                "id": "chatcmpl-eval",
                "object": "chat.completion",
                "choices": [{
                    "index": 0,
                    "message": { "role": "assistant", "content": content },
                    "finish_reason": "stop",
                }],
            }))
    }
}

/// The query of a selector request: the user message opens with `Query: <query>` followed by a
/// blank line (see `selector::user_message`).
pub(super) fn query_of(body: &[u8]) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let user = body
        .get("messages")?
        .as_array()?
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?
        .get("content")?
        .as_str()?;
    let rest = user.strip_prefix("Query: ")?;
    let end = rest.find("\n\n")?;
    rest.get(..end).map(str::to_owned)
}
