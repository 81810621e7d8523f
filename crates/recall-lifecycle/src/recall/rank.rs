//! Scanning the memory roots and ranking what they hold against the query.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use lexical_score::delivery::{QueryEvidence, Tier};
use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens};
use memory_scan::{ScanReport, ScannedDocument};

use super::RecallContext;
use crate::confidence::{FastConfidence, judge_fast};

pub(super) struct Ranked {
    /// The scanned documents not excluded, scored in place (`Arc<T>` is `Scorable`).
    pub(super) pool: Vec<Arc<ScannedDocument>>,
    pub(super) selection: CandidateSelection,
    /// What the delivery rule keeps of the lexical top five, best first, each with how it is
    /// shown: the heuristic settle.
    pub(super) delivered: Vec<(lexical_score::Ranked, Tier)>,
    /// The judgement of the fast result; `None` when nothing matched.
    pub(super) fast_confidence: Option<FastConfidence>,
    pub(super) docs_scanned: usize,
    pub(super) report: ScanReport,
}

pub(super) fn scan_and_rank(
    ctx: &RecallContext,
    query: &str,
    tools: &[String],
    excluded: &HashSet<PathBuf>,
) -> Result<Ranked, memory_scan::ScanError> {
    let tokens = QueryTokens::new(query);
    // Each document is scored while the scan has its text at hand; the ranking below reads those
    // scores instead of fetching every document's text or index again.
    let scan = ctx.cache.scan_recall_for(&ctx.roots, &tokens)?;
    let docs_scanned = scan.documents.len();
    let pool: Vec<Arc<ScannedDocument>> = scan
        .documents
        .into_iter()
        // Hashing every path costs more than the check itself when nothing is excluded.
        .filter(|doc| excluded.is_empty() || !excluded.contains(doc.path()))
        .collect();
    // Derived once per recall, never per document
    // (`docs/design.md#tool-aliases-are-derived-once-per-recall`).
    let aliases = ActiveToolAliases::from_tool_names(tools);
    let selection = CandidateSelection::select(&tokens, &pool, &aliases);
    let rule = ctx.delivery_rule;
    let delivered: Vec<(lexical_score::Ranked, Tier)> = if rule.is_untrimmed() {
        selection
            .heuristic()
            .iter()
            .map(|&ranked| (ranked, Tier::Whole))
            .collect()
    } else {
        // The scoring pass counted each token's documents: nothing is read again before the
        // fast result.
        let scored = pool.len() - selection.noise_dropped();
        let frequencies = Some(selection.document_frequencies());
        let evidence =
            QueryEvidence::with_frequencies(&tokens, &rule.evidence, frequencies, scored);
        rule.deliver_judged(&evidence, selection.heuristic(), &pool)
            .into_iter()
            .map(|judged| (judged.ranked, ctx.tiering.tier(judged.evidence)))
            .collect()
    };
    let fast_confidence = delivered
        .first()
        .map(|(lead, _)| lead)
        .filter(|lead| selection.fast().contains(lead))
        .and_then(|lead| pool.get(lead.index))
        .map(|lead| judge_fast(&tokens, lead));
    Ok(Ranked {
        pool,
        selection,
        delivered,
        fast_confidence,
        docs_scanned,
        report: scan.report,
    })
}

impl Ranked {
    /// The fast result shown as `tier`: what the delivery rule keeps of the lexical top two.
    pub(super) fn fast(&self, tier: Tier) -> Vec<usize> {
        let fast = self.selection.fast();
        self.delivered
            .iter()
            .filter(|(r, shown)| *shown == tier && fast.contains(r))
            .map(|(r, _)| r.index)
            .collect()
    }

    /// The delivered documents shown as `tier`, best first.
    pub(super) fn delivered(&self, tier: Tier) -> impl Iterator<Item = usize> + '_ {
        self.delivered
            .iter()
            .filter(move |(_, shown)| *shown == tier)
            .map(|(r, _)| r.index)
    }

    /// Documents of the lexical top five the delivery rule left out.
    pub(super) fn trimmed(&self) -> usize {
        self.selection.heuristic().len() - self.delivered.len()
    }
}

pub(super) fn documents_at(
    pool: &[Arc<ScannedDocument>],
    indices: impl Iterator<Item = usize>,
) -> Vec<Arc<ScannedDocument>> {
    indices
        .filter_map(|i| pool.get(i))
        .map(Arc::clone)
        .collect()
}
