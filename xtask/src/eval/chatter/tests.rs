use std::time::SystemTime;

use super::*;

#[test]
fn the_shipped_rule_passes_the_chatter_gates_of_the_test_part() {
    let report = chatter_report(SystemTime::now()).unwrap();
    assert_eq!(chatter_gates(&report), Vec::<String>::new());
}

#[test]
fn the_untrimmed_delivery_in_the_shipped_place_fails_the_chatter_gate() {
    let mut report = chatter_report(SystemTime::now()).unwrap();
    report.rules.swap(0, 1);
    assert!(
        chatter_gates(&report)
            .iter()
            .any(|f| f.contains("notes per"))
    );
}

#[test]
fn the_shipped_rule_and_the_untrimmed_reference_are_judged_on_both_parts() {
    let report = chatter_report(SystemTime::now()).unwrap();
    for rule in &report.rules[..4] {
        assert!(rule.judged_on_test, "{}", rule.rule);
        let all = rule.row(ALL, ALL).unwrap();
        assert!(all.tune.nothing_turns > 0 && all.test.is_some_and(|c| c.nothing_turns > 0));
    }
    assert_eq!(report.tune_turns + report.test_turns, {
        let all = report.rules[0].row(ALL, ALL).unwrap();
        let test = all.test.unwrap_or_default();
        all.tune.nothing_turns
            + all.tune.answerable_turns
            + test.nothing_turns
            + test.answerable_turns
    });
}

#[test]
fn the_untrimmed_delivery_sends_at_least_what_the_shipped_rule_sends_on_chatter() {
    let report = chatter_report(SystemTime::now()).unwrap();
    let shipped = report.rules[0].row(ALL, ALL).unwrap();
    let untrimmed = report.rules[1].row(ALL, ALL).unwrap();
    assert!(untrimmed.tune.nothing_delivered >= shipped.tune.nothing_delivered);
}

#[test]
fn candidate_rules_are_measured_on_the_tuning_part_only() {
    let report = chatter_report(SystemTime::now()).unwrap();
    let candidates = &report.rules[4..];
    assert!(!candidates.is_empty());
    for rule in candidates {
        assert!(!rule.judged_on_test, "{}", rule.rule);
        assert!(rule.rows.iter().all(|r| r.test.is_none()), "{}", rule.rule);
    }
}

#[test]
fn a_note_given_as_one_line_costs_fewer_characters_than_the_note_whole() {
    let report = chatter_report(SystemTime::now()).unwrap();
    let before = report.rules[2].row(ALL, ALL).unwrap();
    let (whole, lines) = before.tune.chars_per_nothing_turn().unwrap();
    assert!(before.tune.nothing_delivered > 0);
    assert!(lines > 0.0 && lines < whole, "{lines} vs {whole}");
}
