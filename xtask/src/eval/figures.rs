//! What reaches the model, counted: documents delivered per turn, delivered precision, hit rate
//! and relevant recall, per slice and over every answerable turn.

use serde::Serialize;

/// What one turn delivered, counted against its case's labels.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnCount {
    /// The case's slice.
    pub slice: &'static str,
    /// Documents that answer the case (0: nothing in memory is relevant).
    pub relevant: usize,
    /// Relevant documents among them.
    pub first_relevant: usize,
    /// Documents delivered in the whole turn.
    pub delivered: usize,
    /// Relevant documents among them.
    pub relevant_delivered: usize,
}

/// The figures of a group of turns.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeliveryFigures {
    /// The slice name, or `answerable` for every answerable turn.
    pub name: String,
    /// Turns with at least one relevant document.
    pub answerable_turns: usize,
    /// Documents delivered per answerable turn.
    pub delivered_per_turn: f64,
    /// Relevant delivered / delivered over the answerable turns; `None` when nothing was
    /// delivered.
    pub precision: Option<f64>,
    /// Share of answerable turns whose first prompt held a relevant document.
    pub hit_first_prompt: f64,
    /// Share of answerable turns that delivered a relevant document at all.
    pub hit_at_all: f64,
    /// The share of each answerable turn's relevant documents delivered, averaged.
    pub relevant_recall: f64,
    /// Turns with nothing relevant.
    pub nothing_relevant_turns: usize,
    /// Documents delivered per turn with nothing relevant; `None` without such turns.
    pub delivered_per_nothing_relevant_turn: Option<f64>,
}

impl DeliveryFigures {
    /// The figures of `turns`, named `name`.
    pub fn of<'a>(name: &str, turns: impl Iterator<Item = &'a TurnCount>) -> Self {
        let mut answerable = 0usize;
        let mut delivered = 0usize;
        let mut relevant_delivered = 0usize;
        let mut hit_first = 0usize;
        let mut hit = 0usize;
        let mut recall_sum = 0.0;
        let mut nothing = 0usize;
        let mut nothing_delivered = 0usize;
        for turn in turns {
            if turn.relevant == 0 {
                nothing += 1;
                nothing_delivered += turn.delivered;
                continue;
            }
            answerable += 1;
            delivered += turn.delivered;
            relevant_delivered += turn.relevant_delivered;
            hit_first += usize::from(turn.first_relevant > 0);
            hit += usize::from(turn.relevant_delivered > 0);
            recall_sum += turn.relevant_delivered as f64 / turn.relevant as f64;
        }
        let per_turn = |part: usize, whole: usize| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        Self {
            name: name.to_owned(),
            answerable_turns: answerable,
            delivered_per_turn: per_turn(delivered, answerable),
            precision: (delivered > 0).then(|| relevant_delivered as f64 / delivered as f64),
            hit_first_prompt: per_turn(hit_first, answerable),
            hit_at_all: per_turn(hit, answerable),
            relevant_recall: if answerable == 0 {
                0.0
            } else {
                recall_sum / answerable as f64
            },
            nothing_relevant_turns: nothing,
            delivered_per_nothing_relevant_turn: (nothing > 0)
                .then(|| nothing_delivered as f64 / nothing as f64),
        }
    }

    /// Per slice (in `slices` order, those with turns) and then over every answerable turn.
    pub fn per_slice(slices: &[&'static str], turns: &[TurnCount]) -> Vec<Self> {
        let mut figures: Vec<Self> = slices
            .iter()
            .map(|slice| Self::of(slice, turns.iter().filter(|t| t.slice == *slice)))
            .filter(|f| f.answerable_turns + f.nothing_relevant_turns > 0)
            .collect();
        figures.push(Self::of(ANSWERABLE, turns.iter()));
        figures
    }
}

/// The name of the figures over every answerable turn.
pub const ANSWERABLE: &str = "answerable";

/// The share of the untrimmed delivery's relevant recall a trimmed delivery must keep on every
/// slice with answers.
pub const KEPT_RECALL: f64 = 0.98;

/// The answerable slices (every case with an answer) of `trimmed` whose relevant recall falls
/// below [`KEPT_RECALL`] of `untrimmed`'s, with both figures. A slice that mixes turns with and
/// without an answer (chatter) is judged by what it delivers when nothing is relevant instead.
pub fn recall_losses<'a>(
    trimmed: &'a [DeliveryFigures],
    untrimmed: &'a [DeliveryFigures],
) -> Vec<(&'a str, f64, f64)> {
    trimmed
        .iter()
        .filter(|t| t.answerable_turns > 0 && t.nothing_relevant_turns == 0)
        .filter(|t| t.name != ANSWERABLE)
        .filter_map(|t| {
            let u = untrimmed.iter().find(|u| u.name == t.name)?;
            (t.relevant_recall < u.relevant_recall * KEPT_RECALL - 1e-9).then_some((
                t.name.as_str(),
                t.relevant_recall,
                u.relevant_recall,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(relevant: usize, delivered: usize, relevant_delivered: usize) -> TurnCount {
        TurnCount {
            slice: "english",
            relevant,
            first_relevant: relevant_delivered,
            delivered,
            relevant_delivered,
        }
    }

    #[test]
    fn precision_counts_relevant_delivered_over_delivered_on_answerable_turns() {
        let turns = [turn(1, 4, 1), turn(2, 4, 2), turn(0, 3, 0)];
        let figures = DeliveryFigures::of("english", turns.iter());
        assert_eq!(figures.precision, Some(3.0 / 8.0));
        assert!((figures.delivered_per_turn - 4.0).abs() < 1e-12);
    }

    #[test]
    fn relevant_recall_averages_each_turns_share() {
        let turns = [turn(2, 1, 1), turn(1, 1, 1)];
        let figures = DeliveryFigures::of("english", turns.iter());
        assert!((figures.relevant_recall - 0.75).abs() < 1e-12);
    }

    #[test]
    fn documents_on_turns_with_nothing_relevant_are_counted_apart() {
        let turns = [turn(0, 3, 0), turn(0, 0, 0), turn(1, 1, 1)];
        let figures = DeliveryFigures::of("chatter", turns.iter());
        assert_eq!(figures.delivered_per_nothing_relevant_turn, Some(1.5));
        assert_eq!(figures.precision, Some(1.0));
    }

    #[test]
    fn a_slice_keeping_less_than_98_percent_of_the_untrimmed_recall_is_a_loss() {
        let untrimmed = [DeliveryFigures::of("english", [turn(1, 5, 1)].iter())];
        let trimmed = [DeliveryFigures::of(
            "english",
            [turn(1, 1, 0), turn(1, 1, 1)].iter(),
        )];
        assert_eq!(recall_losses(&trimmed, &untrimmed), [("english", 0.5, 1.0)]);
        assert!(recall_losses(&untrimmed, &untrimmed).is_empty());
    }
}
