//! The tools' arguments, as the client sends them and their JSON schemas describe them.

use memory_scan::{MemoryType, Scope};
use schemars::JsonSchema;
use serde::Deserialize;

/// Which memory root.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum ScopeArg {
    /// This project's memory.
    Project,
    /// The user's memory, shared by every project.
    User,
}

impl ScopeArg {
    pub(super) fn scope(self) -> Scope {
        match self {
            ScopeArg::Project => Scope::Project,
            ScopeArg::User => Scope::User,
        }
    }
}

/// What kind of memory.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum TypeArg {
    /// Who the user is and how they like to work.
    User,
    /// Guidance the user gave about how to work (do this, never do that).
    Feedback,
    /// Facts about the project: decisions, incidents, deadlines, releases.
    Project,
    /// Pointers to outside material: dashboards, tickets, documents.
    Reference,
}

impl TypeArg {
    pub(super) fn memory_type(self) -> MemoryType {
        match self {
            TypeArg::User => MemoryType::User,
            TypeArg::Feedback => MemoryType::Feedback,
            TypeArg::Project => MemoryType::Project,
            TypeArg::Reference => MemoryType::Reference,
        }
    }
}

/// `recall_memories` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RecallParams {
    /// What to look up, in the user's own words; any language.
    pub(super) query: String,
    /// Most memories to return, 1 to 5 (default 5).
    #[serde(default)]
    #[schemars(schema_with = "limit_schema")]
    pub(super) limit: Option<usize>,
}

/// `limit`'s schema: a plain integer from 1 to 5. The derived one would say `"format":"uint"`
/// with a minimum of 0, a format clients do not know (Gemini CLI warns about it) and a range the
/// tool refuses.
fn limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "integer",
        "minimum": 1,
        "maximum": super::MAX_RECALLED,
        "default": super::MAX_RECALLED,
    })
}

/// `list_memories` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListParams {
    /// Only this root's memories (default: both).
    #[serde(default)]
    pub(super) scope: Option<ScopeArg>,
    /// Only memories of this type (default: every type).
    #[serde(default, rename = "type")]
    pub(super) memory_type: Option<TypeArg>,
}

/// `explain_recall` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExplainParams {
    /// The query to explain the ranking for.
    pub(super) query: String,
}

/// `save_memory` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SaveParams {
    /// A short title, one line (at most 200 characters); recall weighs its words most.
    pub(super) title: String,
    /// One line saying what the memory is about and when it matters.
    pub(super) description: String,
    /// The kind of memory.
    #[serde(rename = "type")]
    pub(super) memory_type: TypeArg,
    /// The memory itself, in Markdown (at most 64 KiB).
    pub(super) body: String,
    /// Where to save it (default: project).
    #[serde(default)]
    pub(super) scope: Option<ScopeArg>,
    /// The file's path below the root, ending in `.md` (default: a name made from the title).
    #[serde(default)]
    pub(super) file: Option<String>,
    /// Overwrite the file when it exists (default: false, and an existing file is an error).
    #[serde(default)]
    pub(super) replace: bool,
}
