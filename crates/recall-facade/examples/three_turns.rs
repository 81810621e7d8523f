//! Drives a three-turn agent session over a temporary memory tree and prints what each turn
//! delivers. Run with `cargo run -p recall-facade --example three_turns`.

use std::path::Path;

use recall_facade::{Delivery, MemoryRecall, RecallConfig};

fn write_topic(
    root: &Path,
    rel: &str,
    kind: &str,
    name: &str,
    description: &str,
    body: &str,
) -> std::io::Result<()> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(
        path,
        format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"),
    )
}

fn show(turn: &str, point: &str, delivery: &Delivery) {
    match delivery {
        Delivery::Delivered(memory) => {
            let titles: Vec<&str> = memory.documents.iter().map(|d| d.title()).collect();
            println!(
                "{turn} {point}: {:?} {:?} {titles:?}",
                memory.phase, memory.strategy
            );
        }
        other => println!("{turn} {point}: nothing ({other:?})"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    write_topic(
        &project,
        "rollback.md",
        "project",
        "Release rollback",
        "How to roll back a release",
        "Run `deploy rollback`.",
    )?;
    write_topic(
        &project,
        "oncall.md",
        "reference",
        "On-call rota",
        "Who is on call this week",
        "See the rota sheet.",
    )?;
    write_topic(
        &user,
        "terse.md",
        "user",
        "Terse answers",
        "The user prefers short answers",
        "No preamble.",
    )?;
    write_topic(
        &user,
        "缓存.md",
        "feedback",
        "缓存规则",
        "Redis 缓存 必须设置过期时间",
        "所有键都要有 TTL。",
    )?;

    let mut recall = MemoryRecall::new(RecallConfig::with_roots(Some(project), Some(user)))?;
    for (turn, query) in [
        ("turn 1", "how do we roll back a release?"),
        ("turn 2", "who is on call for the release?"),
        ("turn 3", "Redis 缓存 要设置过期吗"),
    ] {
        recall.begin_turn(query, &[]);
        let initial = recall.initial().await;
        show(turn, "initial", &initial);
        let after_tool = recall.after_tool_result();
        show(turn, "tool_result", &after_tool);
        recall.end_turn();
    }
    recall.shutdown();
    Ok(())
}
