//! Loading `corpus/recall-eval` through the real recall scanner.
//!
//! The corpus is copied to a temporary directory so that file times can be set without touching
//! the checkout: every document's mtime becomes one shared `now` minus its `age_days`, which makes
//! recency tie-breaks deterministic. The copy is then read by [`DocumentCache::scan_recall`],
//! exactly as a recall reads a memory tree.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail, ensure};
use memory_scan::{DocumentCache, MemoryRoots, ScannedDocument};
use serde::Deserialize;
use tempfile::TempDir;

/// The slice whose cases are answerable but share no token with their document.
pub const SEMANTIC_SLICE: &str = "semantic-no-lexical";
/// The slice whose cases are answerable and share no whole word with any document, but whose
/// tokens occur inside longer words of other documents: the lexical result is wrong.
pub const NOISY_SLICE: &str = "semantic-noisy";
/// The slice whose cases nothing in the corpus answers.
pub const NO_RESULT_SLICE: &str = "no-result";
/// The slice that compares the shipped scorer against the frozen one.
pub const ENGLISH_SLICE: &str = "english";
/// The slice whose cases two or three documents answer together, labelled by meaning (some
/// answers are in another language than the question): it measures what a delivery keeps, not
/// the scorer, so the scorer's Recall@5 and top-1 gates leave it out.
pub const MULTI_ANSWER_SLICE: &str = "multi-answer";
/// The slice of everyday prompts to a coding agent, most with nothing relevant in memory, some
/// with one document: it measures what a delivery sends when nothing matters, so the scorer's
/// gates leave it out.
pub const CHATTER_SLICE: &str = "chatter";

/// Every slice the corpus may use, in report order. A case naming another slice is an error, so
/// a typo cannot quietly take a case out of every gate.
pub const SLICES: [&str; 19] = [
    ENGLISH_SLICE,
    "chinese",
    "japanese",
    "korean",
    "thai",
    "lao",
    "khmer",
    "myanmar",
    "keywords",
    "mixed",
    "nfkc",
    "body-only",
    "non-ascii-alphabetic",
    "tie-break",
    SEMANTIC_SLICE,
    NOISY_SLICE,
    MULTI_ANSWER_SLICE,
    CHATTER_SLICE,
    NO_RESULT_SLICE,
];

/// Whether the scorer's quality gates (Recall@5, top-1, no-result precision and recall) leave a
/// slice out: it measures a known lexical gap, or what a delivery sends rather than the ranking.
pub fn is_outside_scorer_gates(slice: &str) -> bool {
    matches!(
        slice,
        SEMANTIC_SLICE | NOISY_SLICE | MULTI_ANSWER_SLICE | CHATTER_SLICE
    )
}

const SECONDS_PER_DAY: u64 = 86_400;

/// One labeled query, with document ids resolved to indices into [`Corpus::documents`].
#[derive(Debug, Clone)]
pub struct Case {
    /// The case id from `cases.toml`.
    pub id: String,
    /// The slice the case belongs to.
    pub slice: String,
    /// The query as a user would type it.
    pub query: String,
    /// Indices of the documents that answer it; empty for a no-result case.
    pub relevant: Vec<usize>,
    /// Index of the document that must rank first, when the case names one.
    pub expect_top: Option<usize>,
}

impl Case {
    /// Whether something in the corpus answers the case.
    pub fn is_answerable(&self) -> bool {
        !self.relevant.is_empty()
    }
}

/// The scanned corpus and its cases. The temporary copy lives as long as this value.
#[derive(Debug)]
pub struct Corpus {
    dir: TempDir,
    /// The documents in recall input order (project first, then user).
    pub documents: Vec<ScannedDocument>,
    /// The corpus id (`project/<rel>` or `user/<rel>`) of each document, parallel to `documents`.
    pub ids: Vec<String>,
    /// The labeled cases, in file order.
    pub cases: Vec<Case>,
    /// The shared "now" every age was measured from.
    pub now: SystemTime,
    /// The cache of the scan that loaded the corpus, for recalls run against the same files.
    pub cache: Arc<DocumentCache>,
}

impl Corpus {
    /// The memory roots of the temporary copy, for running real recalls against it.
    pub fn roots(&self) -> MemoryRoots {
        MemoryRoots {
            project: Some(self.dir.path().join("project")),
            user: Some(self.dir.path().join("user")),
        }
    }

    /// The absolute path of the document at `index` in the temporary copy.
    pub fn path(&self, index: usize) -> Option<&Path> {
        self.documents.get(index).map(|d| d.document().path())
    }

    /// The answerable cases.
    pub fn answerable(&self) -> impl Iterator<Item = &Case> {
        self.cases.iter().filter(|c| c.is_answerable())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentsFile {
    document: Vec<DocumentEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentEntry {
    id: String,
    age_days: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CasesFile {
    case: Vec<CaseEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    id: String,
    slice: String,
    query: String,
    relevant: Vec<String>,
    expect_top: Option<String>,
    #[allow(
        dead_code,
        reason = "read so that deny_unknown_fields accepts it; only for humans"
    )]
    note: Option<String>,
}

/// The corpus directory of the checkout.
pub fn corpus_dir() -> Result<PathBuf> {
    Ok(crate::workspace_root()?.join("corpus/recall-eval"))
}

/// Loads the corpus at `source` (a directory holding `project/`, `user/`, `documents.toml` and
/// `cases.toml`), with every age measured from `now`.
pub fn load(source: &Path, now: SystemTime) -> Result<Corpus> {
    let ages = read_ages(&source.join("documents.toml"))?;
    let dir =
        tempfile::tempdir().context("could not create a temporary directory for the corpus")?;
    for scope in ["project", "user"] {
        copy_tree(&source.join(scope), &dir.path().join(scope))?;
    }
    for (id, age_days) in &ages {
        let path = dir.path().join(id);
        ensure!(
            path.is_file(),
            "documents.toml names {id}, but there is no such file in {}",
            source.display()
        );
        let mtime = now
            .checked_sub(Duration::from_secs(age_days * SECONDS_PER_DAY))
            .with_context(|| format!("{id}: age of {age_days} days is before the epoch"))?;
        fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(mtime))
            .with_context(|| format!("could not set the mtime of {}", path.display()))?;
    }

    let roots = MemoryRoots {
        project: Some(dir.path().join("project")),
        user: Some(dir.path().join("user")),
    };
    let cache = Arc::new(DocumentCache::new());
    let scan = cache
        .scan_recall(&roots)
        .context("the recall scanner failed on the corpus")?;
    if let Some(skipped) = scan.report.skipped.first() {
        bail!(
            "the scanner skipped corpus file {} ({:?}); every corpus file must be a topic document",
            skipped.path.display(),
            skipped.reason
        );
    }

    let mut documents = Vec::with_capacity(scan.documents.len());
    let mut ids = Vec::with_capacity(scan.documents.len());
    for scanned in scan.documents {
        let document = scanned.document();
        let id = document_id(document.scope().as_str(), document.relative_path())?;
        ensure!(
            ages.contains_key(&id),
            "corpus document {id} has no age_days entry in documents.toml"
        );
        ids.push(id);
        documents.push(Arc::unwrap_or_clone(scanned));
    }
    ensure!(
        ids.len() == ages.len(),
        "documents.toml lists {} documents but the scanner found {}",
        ages.len(),
        ids.len()
    );

    let index: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let cases = read_cases(&source.join("cases.toml"), &index)?;
    for case in cases.iter().filter(|c| c.slice == NOISY_SLICE) {
        check_noisy(case, &documents, &ids)?;
    }
    Ok(Corpus {
        dir,
        documents,
        ids,
        cases,
        now,
        cache,
    })
}

/// Checks that a `semantic-noisy` case fits its slice: its query shares no whole word with the
/// scored text (title, description, body window) of any document, some query token occurs
/// inside a longer word of a document that does not answer it, and none inside one that does.
fn check_noisy(case: &Case, documents: &[ScannedDocument], ids: &[String]) -> Result<()> {
    let tokens = lexical_score::QueryTokens::new(&case.query);
    let mut noise = false;
    for (index, (document, id)) in documents.iter().zip(ids).enumerate() {
        let text = document.prepared();
        for field in [text.title(), text.description(), text.body_window()] {
            let words: std::collections::HashSet<String> =
                lexical_score::tokenize(field).into_iter().collect();
            for token in tokens.as_slice() {
                ensure!(
                    !words.contains(token),
                    "{NOISY_SLICE} case {} shares the word {token:?} with {id}",
                    case.id
                );
                if field.contains(token.as_str()) {
                    ensure!(
                        !case.relevant.contains(&index),
                        "{NOISY_SLICE} case {} matches its own answer {id} inside a longer word \
                         ({token:?}), so its lexical result is not wrong",
                        case.id
                    );
                    noise = true;
                }
            }
        }
    }
    ensure!(
        noise,
        "{NOISY_SLICE} case {} matches no document at all; it belongs in {SEMANTIC_SLICE}",
        case.id
    );
    Ok(())
}

/// `scope/relative`, with `/` separators whatever the platform.
pub(super) fn document_id(scope: &str, relative: &Path) -> Result<String> {
    let mut id = scope.to_owned();
    for component in relative.components() {
        let part = component
            .as_os_str()
            .to_str()
            .with_context(|| format!("corpus path {} is not UTF-8", relative.display()))?;
        id.push('/');
        id.push_str(part);
    }
    Ok(id)
}

pub(super) fn read_ages(path: &Path) -> Result<HashMap<String, u64>> {
    let text =
        fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
    let file: DocumentsFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    let mut ages = HashMap::with_capacity(file.document.len());
    for entry in file.document {
        if ages.insert(entry.id.clone(), entry.age_days).is_some() {
            bail!("documents.toml lists {} twice", entry.id);
        }
    }
    Ok(ages)
}

fn read_cases(path: &Path, index: &HashMap<&str, usize>) -> Result<Vec<Case>> {
    let text =
        fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
    let file: CasesFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    let resolve = |case: &str, id: &str| -> Result<usize> {
        index
            .get(id)
            .copied()
            .with_context(|| format!("case {case} names unknown document {id}"))
    };
    let mut seen = BTreeSet::new();
    let mut cases = Vec::with_capacity(file.case.len());
    for entry in file.case {
        ensure!(
            seen.insert(entry.id.clone()),
            "case id {} is used twice",
            entry.id
        );
        ensure!(
            SLICES.contains(&entry.slice.as_str()),
            "case {} names unknown slice {:?} (known: {})",
            entry.id,
            entry.slice,
            SLICES.join(", ")
        );
        let relevant = entry
            .relevant
            .iter()
            .map(|id| resolve(&entry.id, id))
            .collect::<Result<Vec<_>>>()?;
        let expect_top = entry
            .expect_top
            .as_deref()
            .map(|id| resolve(&entry.id, id))
            .transpose()?;
        let no_result = entry.slice == NO_RESULT_SLICE;
        ensure!(
            !no_result || relevant.is_empty(),
            "case {}: a case in the {NO_RESULT_SLICE} slice has no relevant documents",
            entry.id
        );
        ensure!(
            !relevant.is_empty() || no_result || entry.slice == CHATTER_SLICE,
            "case {}: only the {NO_RESULT_SLICE} and {CHATTER_SLICE} slices have cases without \
             relevant documents",
            entry.id
        );
        if let Some(top) = expect_top {
            ensure!(
                relevant.contains(&top),
                "case {}: expect_top is not one of its relevant documents",
                entry.id
            );
        }
        cases.push(Case {
            id: entry.id,
            slice: entry.slice,
            query: entry.query,
            relevant,
            expect_top,
        });
    }
    Ok(cases)
}

/// Copies every regular file below `from` to the same place below `to`.
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("could not create {}", to.display()))?;
    let entries =
        fs::read_dir(from).with_context(|| format!("could not list {}", from.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("could not list {}", from.display()))?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &target)
                .with_context(|| format!("could not copy {}", entry.path().display()))?;
        } else {
            bail!(
                "{} is neither a file nor a directory",
                entry.path().display()
            );
        }
    }
    Ok(())
}
