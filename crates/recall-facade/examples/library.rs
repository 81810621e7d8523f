//! The memory for one query over the demo tree: `cargo run -p recall-facade --example library`.
use std::path::PathBuf;

use recall_facade::{FacadeError, MemoryRecall, RecallConfig};

/// The memory prompt recall delivers for `query` with the first model request, if any.
pub async fn first_prompt(
    project: PathBuf,
    user: PathBuf,
    query: &str,
) -> Result<Option<String>, FacadeError> {
    let mut recall = MemoryRecall::new(RecallConfig::with_roots(Some(project), Some(user)))?;
    recall.begin_turn(query, &[]);
    let delivery = recall.initial().await; // waits at most 100 ms
    recall.end_turn();
    Ok(delivery.delivered().map(|memory| memory.prompt.clone()))
}

#[tokio::main]
async fn main() -> Result<(), FacadeError> {
    let (project, user) = ("corpus/demo/project".into(), "corpus/demo/user".into());
    if let Some(prompt) = first_prompt(project, user, "how do we roll back a release?").await? {
        println!("{prompt}"); // put it before the user's message in the model request
    }
    Ok(())
}
