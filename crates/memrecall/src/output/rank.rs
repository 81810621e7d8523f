//! What `rank` and `scan` print.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use lexical_score::delivery::{
    Background, DeliveryRule, QueryEvidence, Tier, Tiering, TokenVerdict, Uninformative, Zipf,
};
use lexical_score::{HEURISTIC_LIMIT, QueryTokens, ScoreBreakdown};
use memory_scan::{MemoryRoots, RecallScan, ScanReport, ScannedDocument};
use serde::Serialize;

use super::Failure;
use super::{DocumentOut, RootsOut, enum_word, ms, one_line};

/// One row of the `rank` command.
#[derive(Debug, Serialize)]
pub struct RankRow {
    #[serde(flatten)]
    document: DocumentOut,
    score: u32,
    /// Per-field contributions.
    breakdown: ScoreBreakdown,
    /// Whether the delivery rule sends it (whole or named in a line).
    delivered: bool,
    /// How it is shown when delivered: whole, or named in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    shown: Option<Tier>,
    /// How many of the query's informative words it holds, of how many.
    informative_words: [u32; 2],
    /// Whether every query token it matched is uninformative (so the delivery rule never sends
    /// it, whatever its score).
    only_uninformative: bool,
    /// The informative query tokens it holds: the words that carried its evidence.
    evidence: Vec<String>,
    /// Which part of the delivery rule decided it.
    decided_by: Decision,
}

/// Which part of the delivery rule decided whether a document is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Delivered whole: enough evidence, close enough to the lead, and at least half of the
    /// query's informative words.
    Delivered,
    /// Named in one line: enough evidence and close enough to the lead, but fewer than half of
    /// the query's informative words.
    NamedInALine,
    /// Ranked below the lexical top five, which is all the rule looks at.
    OutsideTopFive,
    /// Every query token it holds is uninformative.
    OnlyUninformative,
    /// Its only evidence is one word common in ordinary text.
    EverydayWordAlone,
    /// No whole-word informative match with two points, and no word only it holds.
    TooLittleEvidence,
    /// Its weighted evidence is below the rule's share of the first document's.
    BelowTheLead,
}

impl Decision {
    fn text(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::NamedInALine => "named in a line (holds less than half of the informative words)",
            Self::OutsideTopFive => "outside the lexical top five",
            Self::OnlyUninformative => "only uninformative words",
            Self::EverydayWordAlone => "one everyday word alone",
            Self::TooLittleEvidence => "too little evidence",
            Self::BelowTheLead => "below the lead's share",
        }
    }
}

/// Each query token with whether the delivery rule counts it as evidence, and why not.
pub fn token_verdicts(query: &str, docs: &[Arc<ScannedDocument>]) -> Vec<TokenVerdict> {
    let prepared: Vec<&ScannedDocument> = docs.iter().map(AsRef::as_ref).collect();
    QueryEvidence::judge(
        &QueryTokens::new(query),
        &DeliveryRule::SHIPPED.evidence,
        &prepared,
    )
    .verdicts()
    .to_vec()
}

impl RankRow {
    /// Ranks `docs` for `query`, every match: first what the delivery rule sends, in delivery
    /// order, then the rest, best first.
    pub fn rank(query: &str, docs: &[Arc<ScannedDocument>]) -> Vec<RankRow> {
        let tokens = QueryTokens::new(query);
        let prepared: Vec<&ScannedDocument> = docs.iter().map(AsRef::as_ref).collect();
        let ranked = lexical_score::rank(&tokens, &prepared);
        let rule = DeliveryRule::SHIPPED;
        let evidence = QueryEvidence::judge(&tokens, &rule.evidence, &prepared);
        let informative = evidence.informative().as_slice();
        let top = ranked.get(..HEURISTIC_LIMIT).unwrap_or(&ranked);
        let kept = rule.deliver(&evidence, top, &prepared);
        let rest = ranked.iter().filter(|r| !kept.contains(r));
        // As the prompt gives them: the notes shown whole, then those named in a line.
        let (whole, lines): (Vec<_>, Vec<_>) = kept.iter().partition(|r| {
            prepared
                .get(r.index)
                .is_none_or(|d| Tiering::SHIPPED.tier(evidence.document(*d)) == Tier::Whole)
        });
        whole
            .into_iter()
            .chain(lines)
            .chain(rest)
            .filter_map(|r| {
                let in_top = top.contains(r);
                prepared.get(r.index).map(|d| {
                    let breakdown = lexical_score::explain(&tokens, *d);
                    let b = &breakdown;
                    let words: Vec<&String> = b
                        .title_hits
                        .iter()
                        .chain(&b.keyword_hits)
                        .chain(&b.description_hits)
                        .chain(&b.usage_scenario_hits)
                        .chain(&b.body_hits)
                        .collect();
                    let evidence_words: Vec<String> = informative
                        .iter()
                        .filter(|token| words.contains(token))
                        .cloned()
                        .collect();
                    let only_uninformative = evidence_words.is_empty();
                    let held = evidence.document(*d);
                    let delivered = kept.contains(r);
                    let shown = delivered.then(|| Tiering::SHIPPED.tier(held));
                    let decided_by = if shown == Some(Tier::Line) {
                        Decision::NamedInALine
                    } else if delivered {
                        Decision::Delivered
                    } else if !in_top {
                        Decision::OutsideTopFive
                    } else if only_uninformative {
                        Decision::OnlyUninformative
                    } else if !held.not_alone {
                        Decision::EverydayWordAlone
                    } else if !rule.evidence.minimum.admits(held) {
                        Decision::TooLittleEvidence
                    } else {
                        Decision::BelowTheLead
                    };
                    RankRow {
                        document: DocumentOut::new(d),
                        score: r.score,
                        breakdown,
                        delivered,
                        shown,
                        informative_words: [held.covered, held.informative],
                        only_uninformative,
                        evidence: evidence_words,
                        decided_by,
                    }
                })
            })
            .collect()
    }

    /// Appends this row, numbered `place`, to `s`.
    fn write_text(&self, s: &mut String, place: usize) {
        let row = self;
        let d = &row.document;
        let mark = format!(" · {}", row.decided_by.text());
        let _ = writeln!(
            s,
            "\n{}. score {} · {}{mark}",
            place,
            row.score,
            d.describe()
        );
        let b = &row.breakdown;
        let hits = |label: &str, weight: u32, hits: &[String]| {
            if hits.is_empty() {
                String::new()
            } else {
                format!(
                    "   {label} +{} ({})\n",
                    weight * u32::try_from(hits.len()).unwrap_or(u32::MAX),
                    one_line(&hits.join(", "))
                )
            }
        };
        s.push_str(&hits("title", 4, &b.title_hits));
        s.push_str(&hits("keywords", 4, &b.keyword_hits));
        s.push_str(&hits("description", 3, &b.description_hits));
        s.push_str(&hits("usage scenarios", 3, &b.usage_scenario_hits));
        s.push_str(&hits("body", 1, &b.body_hits));
        if b.type_boost > 0 {
            let _ = writeln!(s, "   type boost +{}", b.type_boost);
        }
        if !row.evidence.is_empty() {
            let [held, of] = row.informative_words;
            let _ = writeln!(
                s,
                "   evidence: {} ({held} of {of} informative words)",
                one_line(&row.evidence.join(", "))
            );
        }
    }

    /// Readable text for a ranking.
    pub fn to_text(
        query: &str,
        rows: &[RankRow],
        verdicts: &[TokenVerdict],
        scanned: usize,
    ) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "query: {}\nscorer: shipped · {scanned} document(s) scanned · {} shown",
            one_line(query),
            rows.len()
        );
        let tokens = QueryTokens::new(query);
        let _ = writeln!(
            s,
            "query tokens: {}",
            one_line(&tokens.as_slice().join(" "))
        );
        let uninformative: Vec<String> = verdicts
            .iter()
            .filter_map(|v| {
                v.uninformative.map(|why| {
                    let why = match why {
                        Uninformative::FunctionWord => "function word".to_owned(),
                        Uninformative::Request => "request".to_owned(),
                        Uninformative::Background { zipf } => {
                            format!("common in ordinary text, Zipf {zipf}")
                        }
                        Uninformative::Common {
                            in_documents,
                            of_documents,
                        } => format!("in {in_documents} of {of_documents} documents"),
                    };
                    format!("{} ({why})", v.token)
                })
            })
            .collect();
        if !uninformative.is_empty() {
            let _ = writeln!(s, "uninformative: {}", one_line(&uninformative.join(", ")));
        }
        if let Some(Background::NotAlone(most)) =
            DeliveryRule::SHIPPED.evidence.uninformative.background
        {
            let everyday: Vec<String> = verdicts
                .iter()
                .filter(|v| v.uninformative.is_none())
                .filter_map(|v| {
                    Zipf::of(&v.token)
                        .filter(|&zipf| zipf >= most)
                        .map(|zipf| format!("{} (Zipf {zipf})", v.token))
                })
                .collect();
            if !everyday.is_empty() {
                let _ = writeln!(
                    s,
                    "evidence only beside another word: {}",
                    one_line(&everyday.join(", "))
                );
            }
        }
        if rows.is_empty() {
            s.push_str("\nno document matches this query\n");
        }
        for (i, row) in rows.iter().enumerate() {
            if !row.delivered && i > 0 && rows.get(i - 1).is_some_and(|r| r.delivered) {
                s.push_str("\nnot delivered, best first:\n");
            }
            row.write_text(&mut s, i + 1);
        }
        s
    }
}

/// The `scan` command's result.
#[derive(Debug, Serialize)]
pub struct ScanOutput {
    roots: RootsOut,
    scan_ms: f64,
    documents: Vec<DocumentOut>,
    report: ScanReport,
}

impl ScanOutput {
    /// Gathers a scan's facts.
    pub fn new(roots: &MemoryRoots, scan: &RecallScan, elapsed: Duration) -> Self {
        Self {
            roots: RootsOut::new(roots),
            scan_ms: ms(elapsed),
            documents: scan.documents.iter().map(|d| DocumentOut::new(d)).collect(),
            report: scan.report.clone(),
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Result<String, Failure> {
        serde_json::to_string_pretty(self).map_err(|e| Failure::from(anyhow::Error::from(e)))
    }

    /// Readable text.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} document(s) in {:.1} ms ({} file(s) seen, {} skipped)",
            self.documents.len(),
            self.scan_ms,
            self.report.files_seen,
            self.report.skipped.len()
        );
        for d in &self.documents {
            let _ = writeln!(
                s,
                "  {:<8} {:<10} {}  ({})",
                enum_word(Some(&d.scope)),
                enum_word(Some(&d.memory_type)),
                d.relative_path.text(),
                one_line(&d.title)
            );
        }
        for skip in &self.report.skipped {
            let reason = serde_json::to_value(&skip.reason)
                .ok()
                .and_then(|v| v.get("reason").and_then(|r| r.as_str().map(str::to_owned)))
                .unwrap_or_default();
            let path = one_line(&skip.path.display().to_string());
            let _ = writeln!(s, "  skipped  {path}: {reason}");
        }
        for warning in &self.report.warnings {
            let _ = writeln!(s, "  warning  {}", one_line(warning));
        }
        s
    }
}
