//! An output block of the README and the rule by which printed output holds it.
//!
//! A quote is runs of lines separated by lines that are only `…` (lines left out). Each run must
//! appear in the output as consecutive lines, the runs in order. A line ending in ` …` matches a
//! printed line that begins with the text before it. Durations are compared as `N ms`.

/// The runs of lines of one output block.
pub struct Quote {
    runs: Vec<Vec<String>>,
}

impl Quote {
    pub fn parse(block: &str) -> Self {
        let mut runs = vec![Vec::new()];
        for line in normalise_durations(block).lines() {
            if line == "…" {
                runs.push(Vec::new());
            } else if let Some(run) = runs.last_mut() {
                run.push(line.to_owned());
            }
        }
        runs.retain(|run| !run.is_empty());
        Self { runs }
    }

    /// The first quoted line `printed` does not hold where the quote needs it, if any.
    pub fn missing_from(&self, printed: &str) -> Option<String> {
        let printed: Vec<&str> = printed.lines().collect();
        let mut from = 0;
        for run in &self.runs {
            match (from..printed.len()).find(|&at| run_matches(run, &printed[at..])) {
                Some(at) => from = at + run.len(),
                None => return run.first().cloned(),
            }
        }
        None
    }
}

fn run_matches(run: &[String], printed: &[&str]) -> bool {
    run.len() <= printed.len()
        && run
            .iter()
            .zip(printed)
            .all(|(quoted, line)| line_matches(quoted, line))
}

fn line_matches(quoted: &str, printed: &str) -> bool {
    match quoted.strip_suffix(" …") {
        Some(start) => printed.starts_with(start),
        None => quoted == printed,
    }
}

/// `text` with every number of milliseconds (`4.4 ms`, `23 ms`) written `N ms`.
pub fn normalise_durations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from_digits) = rest.split_at(start);
        out.push_str(before);
        let number_len = from_digits
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(from_digits.len());
        let (number, after) = from_digits.split_at(number_len);
        let follows_a_word = before
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        if !follows_a_word && after.starts_with(" ms") {
            out.push('N');
        } else {
            out.push_str(number);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_n_ms_and_other_numbers_stay() {
        assert_eq!(
            normalise_durations("after 4.4 ms, scanned 12 document(s), p50 23 ms"),
            "after N ms, scanned 12 document(s), p50 N ms"
        );
    }

    #[test]
    fn a_quote_with_a_gap_matches_its_runs_in_order() {
        let quote = Quote::parse("a\nb\n…\nd\n");
        assert_eq!(quote.missing_from("a\nb\nc\nd\n"), None);
        assert_eq!(quote.missing_from("a\nc\nb\nd\n"), Some("a".to_owned()));
        assert_eq!(quote.missing_from("d\na\nb\n"), Some("d".to_owned()));
    }

    #[test]
    fn a_line_ending_in_an_ellipsis_matches_by_its_start() {
        let quote = Quote::parse("added the hook to ~/x: …\n");
        assert_eq!(quote.missing_from("added the hook to ~/x: /bin/m\n"), None);
        assert_eq!(
            quote.missing_from("added a hook to ~/x: /bin/m\n"),
            Some("added the hook to ~/x: …".to_owned())
        );
    }
}
