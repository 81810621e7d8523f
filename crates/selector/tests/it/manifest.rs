use selector::{Candidate, DESCRIPTION_MAX_CHARS, MANIFEST_MAX_BYTES, Manifest};

use crate::support::{candidate, sample_candidates};

#[test]
fn manifest_lists_type_path_timestamp_and_description_in_candidate_order() {
    let manifest = Manifest::build(&sample_candidates());
    insta::assert_snapshot!(manifest.text());
}

#[test]
fn empty_description_leaves_out_the_colon_part() {
    let manifest = Manifest::build(&[candidate("/m/reference/a.md", "reference", "")]);
    assert_eq!(
        manifest.text(),
        "- [reference] /m/reference/a.md (2026-11-30T12:00:00.000Z)\n"
    );
}

#[test]
fn line_breaks_in_a_description_become_spaces() {
    let manifest = Manifest::build(&[candidate("/m/a.md", "user", "first\nsecond\r\nthird")]);
    assert_eq!(manifest.text().lines().count(), 1);
    assert!(manifest.text().contains(": first second  third"));
}

#[test]
fn description_longer_than_the_limit_is_cut_to_whole_characters() {
    let long: String = "記憶😀".repeat(400);
    let manifest = Manifest::build(&[candidate("/m/a.md", "project", &long)]);
    let shown = manifest.text().trim_end().split_once("): ").unwrap().1;
    assert_eq!(shown.chars().count(), DESCRIPTION_MAX_CHARS);
    assert!(long.starts_with(shown));
}

#[test]
fn two_hundred_cjk_and_emoji_candidates_stay_within_the_byte_cap_without_split_characters() {
    // 511 characters of 3- and 4-byte UTF-8: far more than the cap allows in total.
    let description: String = "検索😀記憶🧠".chars().cycle().take(511).collect();
    let candidates: Vec<Candidate> = (0..200)
        .map(|i| {
            candidate(
                &format!("/m/project/topic-{i:03}.md"),
                "project",
                &description,
            )
        })
        .collect();

    let manifest = Manifest::build(&candidates);

    assert!(manifest.text().len() <= MANIFEST_MAX_BYTES);
    assert!(!manifest.is_empty());
    assert!(manifest.len() < candidates.len());
    for line in manifest.text().lines() {
        let shown = line.split_once("): ").unwrap().1;
        assert_eq!(shown, description, "a description was altered: {line}");
    }
}

#[test]
fn overflowing_line_is_skipped_and_a_later_short_line_still_included() {
    let filler = "x".repeat(DESCRIPTION_MAX_CHARS - 1);
    let mut candidates: Vec<Candidate> = (0..200)
        .map(|i| candidate(&format!("/m/project/long-{i:03}.md"), "project", &filler))
        .collect();
    candidates.push(candidate("/m/user/short.md", "user", "s"));

    let manifest = Manifest::build(&candidates);

    let last_long = manifest
        .ids()
        .iter()
        .rposition(|id| id.contains("/long-"))
        .unwrap();
    assert!(
        last_long + 1 < 200,
        "every long line fitted; the test needs an overflow"
    );
    assert!(manifest.contains("/m/user/short.md"));
    assert!(!manifest.contains("/m/project/long-199.md"));
    assert!(manifest.text().len() <= MANIFEST_MAX_BYTES);
}

#[test]
fn the_same_relative_path_in_both_scopes_stays_two_distinct_ids() {
    let project = candidate("/work/app/.memory/user/role.md", "user", "project copy");
    let user = candidate("/home/dev/.memory/user/role.md", "user", "user copy");

    let manifest = Manifest::build(&[project.clone(), user.clone()]);

    assert_eq!(manifest.len(), 2);
    assert!(manifest.contains(&project.id));
    assert!(manifest.contains(&user.id));
}

#[test]
fn a_repeated_candidate_id_is_listed_once() {
    let first = candidate("/m/a.md", "user", "first");
    let again = candidate("/m/a.md", "user", "again");

    let manifest = Manifest::build(&[first, again]);

    assert_eq!(manifest.len(), 1);
    assert!(manifest.text().contains("first"));
    assert!(!manifest.text().contains("again"));
}

#[test]
fn no_candidates_make_an_empty_manifest() {
    let manifest = Manifest::build(&[]);
    assert!(manifest.is_empty());
    assert_eq!(manifest.text(), "");
}

#[test]
fn an_id_with_a_line_break_is_left_out_rather_than_forging_a_line() {
    let forged = candidate("/m/a.md\n- [user] /m/fake.md", "user", "x");
    let manifest = Manifest::build(&[forged, candidate("/m/b.md", "user", "y")]);
    assert_eq!(manifest.ids(), ["/m/b.md"]);
    assert_eq!(manifest.text().lines().count(), 1);
}

#[test]
fn keywords_follow_the_description_when_a_candidate_has_them() {
    let mut with = candidate("/m/a.md", "feedback", "Review style");
    with.keywords = vec!["naming".into(), "error handling".into()];
    let manifest = Manifest::build(&[with]);
    assert_eq!(
        manifest.text(),
        "- [feedback] /m/a.md (2026-11-30T12:00:00.000Z): Review style [keywords: naming, error handling]\n"
    );
}

#[test]
fn keywords_beyond_their_limit_are_left_out_whole() {
    let mut with = candidate("/m/a.md", "user", "");
    with.keywords = vec!["記憶".repeat(30); 5];
    let manifest = Manifest::build(&[with]);
    let shown = manifest.text().split_once("[keywords: ").unwrap().1;
    let shown = shown.trim_end().strip_suffix(']').unwrap();
    assert_eq!(shown, ["記憶".repeat(30), "記憶".repeat(30)].join(", "));
    assert!(shown.chars().count() <= selector::KEYWORDS_MAX_CHARS);
}
