//! The trim rules as specified: what each keeps of a judged ranking.

use super::*;

fn judged(points: u32, whole_word: bool, index: usize) -> Judged {
    Judged {
        ranked: Ranked {
            index,
            score: points,
        },
        evidence: DocumentEvidence {
            points,
            weight: points * 100,
            whole_word,
            rare: false,
            not_alone: true,
            covered: 1,
            informative: 1,
        },
    }
}

fn kept(rule: TrimRule, judged: &[Judged]) -> Vec<bool> {
    rule.keeps(judged)
}

#[test]
fn a_share_outside_one_to_a_hundred_percent_cannot_be_made() {
    assert_eq!(Share::percent(0), None);
    assert_eq!(Share::percent(101), None);
    assert_eq!(Share::percent(100).map(Share::as_percent), Some(100));
}

#[test]
fn a_gap_factor_of_one_or_less_cannot_be_made() {
    assert_eq!(GapFactor::tenths(10), None);
    assert_eq!(GapFactor::tenths(0), None);
    assert_eq!(GapFactor::tenths(15).map(GapFactor::as_tenths), Some(15));
}

#[test]
fn untrimmed_keeps_every_document() {
    let docs = [judged(9, true, 0), judged(1, false, 1), judged(1, false, 2)];
    assert_eq!(kept(TrimRule::Untrimmed, &docs), [true, true, true]);
}

#[test]
fn top_k_keeps_the_first_k() {
    let docs = [judged(9, true, 0), judged(8, true, 1), judged(7, true, 2)];
    let two = TrimRule::TopK(NonZeroUsize::new(2).unwrap());
    assert_eq!(kept(two, &docs), [true, true, false]);
}

#[test]
fn lead_share_keeps_documents_reaching_the_share_of_the_lead() {
    let docs = [judged(10, true, 0), judged(5, true, 1), judged(4, true, 2)];
    assert_eq!(
        kept(TrimRule::LeadShare(Share::percent(50).unwrap()), &docs),
        [true, true, false]
    );
}

#[test]
fn whole_word_after_first_keeps_the_lead_even_when_it_matched_inside_a_word() {
    let docs = [
        judged(10, false, 0),
        judged(9, true, 1),
        judged(8, false, 2),
    ];
    assert_eq!(
        kept(TrimRule::WholeWordAfterFirst, &docs),
        [true, true, false]
    );
}

#[test]
fn gap_stops_at_the_first_drop_larger_than_the_factor_and_never_resumes() {
    let docs = [
        judged(10, true, 0),
        judged(8, true, 1),
        judged(3, true, 2),
        judged(3, true, 3),
    ];
    let gap = TrimRule::Gap(GapFactor::tenths(20).unwrap());
    assert_eq!(kept(gap, &docs), [true, true, false, false]);
}

#[test]
fn every_trim_keeps_the_same_prefix_for_a_shorter_delivery() {
    let docs = [
        judged(10, true, 0),
        judged(4, false, 1),
        judged(6, true, 2),
        judged(1, true, 3),
    ];
    let rules = [
        TrimRule::Untrimmed,
        TrimRule::TopK(NonZeroUsize::new(1).unwrap()),
        TrimRule::LeadShare(Share::percent(30).unwrap()),
        TrimRule::WholeWordAfterFirst,
        TrimRule::Gap(GapFactor::tenths(20).unwrap()),
    ];
    for rule in rules {
        let long = kept(rule, &docs);
        let short = kept(rule, &docs[..2]);
        assert_eq!(&long[..2], short.as_slice(), "{rule:?}");
    }
}

#[test]
fn nothing_to_trim_keeps_nothing() {
    assert!(kept(TrimRule::LeadShare(Share::percent(50).unwrap()), &[]).is_empty());
}
