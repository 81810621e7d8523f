//! Asking the selector to refine the lexical ranking, within its ceiling, or falling back to the
//! lexical result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::Strategy;
use lexical_score::delivery::Tier;
use memory_scan::ScannedDocument;
use selector::{
    AnswerError, Candidate, SELECTOR_CEILING, SelectionRequest, Selector, SelectorError,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::candidate_id::candidate_id;
use super::rank::{Ranked, documents_at};
use super::{RecallContext, RecallInput};

/// What the recall settles with, before telemetry and timings are attached.
pub(super) struct Selection {
    pub(super) strategy: Strategy,
    pub(super) documents: Vec<Arc<ScannedDocument>>,
    /// Documents shown as one line each (a lexical result's weak matches).
    pub(super) lines: Vec<Arc<ScannedDocument>>,
    pub(super) selector_duration: Option<Duration>,
    pub(super) selector_error: Option<SelectorError>,
}

/// Asks the selector (when there is one) or takes the lexical result; `None` when the caller
/// cancelled the recall meanwhile.
pub(super) async fn choose(
    ctx: &RecallContext,
    input: &RecallInput,
    ranked: &Ranked,
    cancel: &CancellationToken,
) -> Option<Selection> {
    let fallback = |tier| documents_at(&ranked.pool, ranked.delivered(tier));
    let lexical = |strategy, documents, lines| Selection {
        strategy,
        documents,
        lines,
        selector_duration: None,
        selector_error: None,
    };
    let selector = match (&ctx.selector, ranked.pool.is_empty()) {
        (_, true) => return Some(lexical(Strategy::None, Vec::new(), Vec::new())),
        (None, false) => {
            return Some(lexical(
                Strategy::Heuristic,
                fallback(Tier::Whole),
                fallback(Tier::Line),
            ));
        }
        (Some(selector), false) => selector,
    };
    let asked = Instant::now();
    let answer = ask_selector(
        selector.as_ref(),
        &input.query,
        &input.recent_tools,
        ranked,
        ctx.limit,
        cancel,
    )
    .await;
    let selector_duration = Some(asked.elapsed());
    if cancel.is_cancelled() {
        return None;
    }
    Some(match answer {
        Ok(documents) => Selection {
            strategy: Strategy::Model,
            documents,
            lines: Vec::new(),
            selector_duration,
            selector_error: None,
        },
        Err(error) => {
            tracing::debug!(%error, "selector failed; using the lexical fallback");
            Selection {
                strategy: Strategy::Heuristic,
                documents: fallback(Tier::Whole),
                lines: fallback(Tier::Line),
                selector_duration,
                selector_error: Some(error),
            }
        }
    })
}

async fn ask_selector(
    selector: &dyn Selector,
    query: &str,
    recent_tools: &[String],
    ranked: &Ranked,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Vec<Arc<ScannedDocument>>, SelectorError> {
    let candidates: Vec<Candidate> = ranked
        .selection
        .candidates()
        .iter()
        .filter_map(|&i| ranked.pool.get(i))
        .map(|doc| Candidate {
            id: candidate_id(doc.path()),
            memory_type: doc.memory_type().as_str().to_owned(),
            mtime: doc.mtime(),
            description: doc.description().to_owned(),
            keywords: doc.topic().keywords().lines().map(str::to_owned).collect(),
        })
        .collect();
    let request = SelectionRequest::new(query, &candidates, limit).with_recent_tools(recent_tools);
    // The lifecycle enforces the ceiling itself so that no selector implementation can hold a
    // recall open longer than the design allows.
    let ids = tokio::select! {
        answer = tokio::time::timeout(SELECTOR_CEILING, selector.select(request, cancel.child_token())) => {
            answer.map_err(|_| SelectorError::Timeout(SELECTOR_CEILING))??
        }
        () = cancel.cancelled() => return Err(SelectorError::Cancelled),
    };
    // The first candidate with an id wins, as in the manifest, so an answered id always names
    // the document whose line the model was shown. Ids are unique per path (`candidate_id`);
    // only the same path listed twice could repeat one, and then both entries are that file.
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(candidates.len());
    for (candidate, &index) in candidates.iter().zip(ranked.selection.candidates()) {
        by_id.entry(candidate.id.as_str()).or_insert(index);
    }
    let mut chosen = Vec::with_capacity(ids.len());
    for (position, id) in ids.iter().take(limit).enumerate() {
        // Selectors validate against the manifest; an id outside the candidates is still
        // refused here so a custom selector cannot smuggle in an unknown document.
        let index = by_id
            .get(id.as_str())
            .ok_or(AnswerError::NotInManifest { position })?;
        if !chosen.contains(index) {
            chosen.push(*index);
        }
    }
    Ok(documents_at(&ranked.pool, chosen.into_iter()))
}
