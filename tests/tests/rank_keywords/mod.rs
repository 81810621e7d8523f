//! `memrecall rank` on a memory with Qwen Code's structured fields: keyword and usage-scenario
//! hits are explained apart from title and description hits.

use crate::support::Tree;

fn tree_with_structured_memory() -> Tree {
    let tree = Tree::new();
    tree.write(
        "project/bundle.md",
        "---\ntitle: Bundle budget\ndescription: main.js stays small\ntype: project\n\
         keywords: [lighthouse, webpack]\nusage_scenarios:\n  - when pages feel sluggish\n---\n\nSplit routes.\n",
    );
    tree
}

#[test]
fn rank_text_lists_keyword_and_usage_scenario_hits_with_their_points() {
    let tree = tree_with_structured_memory();
    let run = tree.run_with_roots("rank", "lighthouse sluggish bundle", &[]);
    run.success().no_panic();
    let expected = "\
query: lighthouse sluggish bundle
scorer: shipped · 1 document(s) scanned · 1 shown
query tokens: lighthouse sluggish bundle

1. score 11 · Bundle budget — bundle.md (project, project scope) · delivered
   title +4 (bundle)
   keywords +4 (lighthouse)
   usage scenarios +3 (sluggish)
   evidence: lighthouse, sluggish, bundle (3 of 3 informative words)
";
    assert_eq!(run.stdout, expected);
}

#[test]
fn rank_json_carries_keyword_and_usage_scenario_hits_in_the_breakdown() {
    let tree = tree_with_structured_memory();
    let run = tree.run_with_roots("rank", "lighthouse sluggish", &["--json"]);
    run.success().no_panic();
    let value = run.json();
    let breakdown = &value["ranked"][0]["breakdown"];
    assert_eq!(breakdown["keyword_hits"], serde_json::json!(["lighthouse"]));
    assert_eq!(
        breakdown["usage_scenario_hits"],
        serde_json::json!(["sluggish"])
    );
    assert_eq!(breakdown["total"], serde_json::json!(7));
}
