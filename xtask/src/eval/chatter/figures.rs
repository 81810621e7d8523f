//! What a rule delivered on a group of chatter turns, counted.

use serde::Serialize;

/// What one turn delivered.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnDelivery {
    /// Notes that answer the turn's case (0: chatter).
    pub relevant: usize,
    /// Notes delivered whole.
    pub delivered: usize,
    /// Relevant notes among them.
    pub relevant_delivered: usize,
    /// Notes named in one line each.
    pub lines: usize,
    /// Relevant notes among them.
    pub relevant_lines: usize,
    /// Characters of the prompt as delivered: whole notes, then lines.
    pub chars: usize,
    /// Characters of a prompt that would give each note as one line instead.
    pub line_chars: usize,
}

/// The figures of a group of turns (one tree, language and part, or a sum of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cell {
    /// Turns with nothing relevant.
    pub nothing_turns: usize,
    /// Notes delivered on them.
    pub nothing_delivered: usize,
    /// Of them, the turns that delivered at least one note.
    pub nothing_delivering: usize,
    /// Turns with a relevant note.
    pub answerable_turns: usize,
    /// Notes delivered on them.
    pub answerable_delivered: usize,
    /// Relevant notes among them.
    pub relevant_delivered: usize,
    /// Sum over answerable turns of the share of their relevant notes delivered.
    pub recall_sum: f64,
    /// Characters delivered on turns with nothing relevant, each note whole.
    pub nothing_chars: usize,
    /// The same, were each note one line.
    pub nothing_line_chars: usize,
    /// Lines given on turns with nothing relevant.
    pub nothing_lines: usize,
    /// Lines given on answerable turns.
    pub answerable_lines: usize,
    /// Relevant notes among them.
    pub relevant_lines: usize,
    /// Sum over answerable turns of the share of their relevant notes delivered whole or named
    /// in a line.
    pub followed_recall_sum: f64,
}

impl Cell {
    /// Adds one turn.
    pub fn add(&mut self, turn: TurnDelivery) {
        if turn.relevant == 0 {
            self.nothing_turns += 1;
            self.nothing_delivered += turn.delivered;
            self.nothing_delivering += usize::from(turn.delivered > 0);
            self.nothing_chars += turn.chars;
            self.nothing_line_chars += turn.line_chars;
            self.nothing_lines += turn.lines;
        } else {
            self.answerable_turns += 1;
            self.answerable_delivered += turn.delivered;
            self.relevant_delivered += turn.relevant_delivered;
            self.answerable_lines += turn.lines;
            self.relevant_lines += turn.relevant_lines;
            #[allow(clippy::cast_precision_loss, reason = "counts of notes are tiny")]
            let share = |found: usize| found as f64 / turn.relevant as f64;
            self.recall_sum += share(turn.relevant_delivered);
            self.followed_recall_sum += share(turn.relevant_delivered + turn.relevant_lines);
        }
    }

    /// Adds every turn of `other`.
    pub fn merge(&mut self, other: &Cell) {
        self.nothing_turns += other.nothing_turns;
        self.nothing_delivered += other.nothing_delivered;
        self.nothing_delivering += other.nothing_delivering;
        self.answerable_turns += other.answerable_turns;
        self.answerable_delivered += other.answerable_delivered;
        self.relevant_delivered += other.relevant_delivered;
        self.recall_sum += other.recall_sum;
        self.nothing_chars += other.nothing_chars;
        self.nothing_line_chars += other.nothing_line_chars;
        self.nothing_lines += other.nothing_lines;
        self.answerable_lines += other.answerable_lines;
        self.relevant_lines += other.relevant_lines;
        self.followed_recall_sum += other.followed_recall_sum;
    }

    /// Lines given per turn with nothing relevant.
    pub fn lines_per_nothing_turn(&self) -> Option<f64> {
        ratio(self.nothing_lines, self.nothing_turns)
    }

    /// Mean share of each answerable turn's relevant notes delivered whole or named in a line:
    /// what reaches the model when it reads every line it is given.
    pub fn followed_recall(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss, reason = "counts of turns are tiny")]
        (self.answerable_turns > 0).then(|| self.followed_recall_sum / self.answerable_turns as f64)
    }

    /// Notes delivered per turn with nothing relevant.
    pub fn notes_per_nothing_turn(&self) -> Option<f64> {
        ratio(self.nothing_delivered, self.nothing_turns)
    }

    /// Characters per turn with nothing relevant, each note whole and each note one line.
    pub fn chars_per_nothing_turn(&self) -> Option<(f64, f64)> {
        Some((
            ratio(self.nothing_chars, self.nothing_turns)?,
            ratio(self.nothing_line_chars, self.nothing_turns)?,
        ))
    }

    /// Share of turns with nothing relevant that delivered anything.
    pub fn delivering_share(&self) -> Option<f64> {
        ratio(self.nothing_delivering, self.nothing_turns)
    }

    /// Relevant delivered / delivered on answerable turns.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.relevant_delivered, self.answerable_delivered)
    }

    /// Mean share of each answerable turn's relevant notes delivered.
    pub fn recall(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss, reason = "counts of turns are tiny")]
        (self.answerable_turns > 0).then(|| self.recall_sum / self.answerable_turns as f64)
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    #[allow(clippy::cast_precision_loss, reason = "counts of notes are tiny")]
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(relevant: usize, delivered: usize, relevant_delivered: usize) -> TurnDelivery {
        TurnDelivery {
            relevant,
            delivered,
            relevant_delivered,
            ..TurnDelivery::default()
        }
    }

    #[test]
    fn chatter_turns_count_notes_and_the_turns_that_delivered_any() {
        let mut cell = Cell::default();
        for t in [turn(0, 3, 0), turn(0, 0, 0), turn(0, 1, 0), turn(0, 0, 0)] {
            cell.add(t);
        }
        assert_eq!(cell.notes_per_nothing_turn(), Some(1.0));
        assert_eq!(cell.delivering_share(), Some(0.5));
        assert_eq!(cell.precision(), None);
    }

    #[test]
    fn answerable_turns_give_precision_over_notes_and_recall_averaged_per_turn() {
        let mut cell = Cell::default();
        cell.add(turn(2, 4, 1));
        cell.add(turn(1, 1, 1));
        assert_eq!(cell.precision(), Some(0.4));
        assert_eq!(cell.recall(), Some(0.75));
        assert_eq!(cell.notes_per_nothing_turn(), None);
    }
}
