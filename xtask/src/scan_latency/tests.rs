use line_chart::{BUDGET_COLOUR, PALETTE};

use super::report::chart;
use super::*;

#[test]
fn median_of_an_even_count_is_the_midpoint() {
    let row = summarise(10, "scan", vec![4.0, 1.0, 3.0, 2.0]);
    assert!((row.median_ms - 2.5).abs() < f64::EPSILON);
    assert!((row.worst_ms - 4.0).abs() < f64::EPSILON);
}

fn parse_options(args: &[&str]) -> Result<ScanLatencyArgs, clap::Error> {
    use clap::Parser as _;
    ScanLatencyArgs::try_parse_from(std::iter::once("scan-latency").chain(args.iter().copied()))
}

#[test]
fn sizes_and_runs_are_parsed_and_validated() {
    let options = parse_options(&["--sizes", "10,20", "--runs", "2", "--json"]).unwrap();
    assert_eq!(options.sizes, vec![10, 20]);
    assert_eq!(options.runs, 2);
    assert!(options.json);
    assert!(parse_options(&["--runs", "0"]).is_err());
    assert!(parse_options(&["--bogus"]).is_err());
}

#[test]
fn options_not_given_take_their_defaults() {
    let options = parse_options(&[]).unwrap();
    assert_eq!(options.sizes, [200, 1_000, 2_000, 5_000, 10_000, 50_000]);
    assert_eq!(options.modes, vec![Mode::Scan, Mode::Catalog]);
    assert_eq!(options.runs, DEFAULT_RUNS);
    assert!(!options.json);
}

#[test]
fn help_is_asked_for_not_an_unknown_option() {
    use clap::error::ErrorKind;
    for flag in ["-h", "--help"] {
        assert_eq!(
            parse_options(&[flag]).unwrap_err().kind(),
            ErrorKind::DisplayHelp
        );
        let after_a_bad_one = parse_options(&["--runs", "0", flag]).unwrap_err();
        assert_eq!(after_a_bad_one.kind(), ErrorKind::ValueValidation);
        let before_a_bad_one = parse_options(&[flag, "--bogus"]).unwrap_err();
        assert_eq!(before_a_bad_one.kind(), ErrorKind::DisplayHelp);
    }
    let unknown = parse_options(&["--bogus"]).unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::UnknownArgument);
    assert!(unknown.to_string().contains("Usage: scan-latency"));
}

#[test]
fn modes_are_parsed_and_unknown_ones_rejected() {
    let parse = |value: &str| parse_options(&["--modes", value]);
    assert_eq!(parse("catalog").unwrap().modes, vec![Mode::Catalog]);
    assert_eq!(
        parse("scan, catalog").unwrap().modes,
        vec![Mode::Scan, Mode::Catalog]
    );
    assert!(parse("cold").is_err());
}

#[test]
fn every_row_measures_its_floor_once_per_timed_run() {
    let report = measure(&[20], &[Mode::Scan, Mode::Catalog], 2, None).unwrap();
    for row in &report.results {
        assert_eq!(row.floor_runs_ms.len(), 2, "{}", row.mode);
        assert!(row.floor_ms.is_some_and(|ms| ms > 0.0), "{}", row.mode);
    }
    assert!(table(&report).contains("floor ms"));
}

#[test]
fn a_small_tree_publishes_its_codeword_topic_as_the_fast_result() {
    let report = measure(&[20], &[Mode::Scan, Mode::Catalog], 1, None).unwrap();
    let modes: Vec<&str> = report.results.iter().map(|r| r.mode).collect();
    assert_eq!(modes, vec!["scan", "catalog"]);
    assert!(report.results.iter().all(|r| r.runs_ms.len() == 1));
}

/// A report as `measure` makes it: the modes alternate row by row.
fn interleaved_report() -> LatencyReport {
    let mut results = Vec::new();
    for (topics, scan_ms, catalog_ms) in [
        (1_000, 8.0, 2.0),
        (10_000, 70.0, 12.0),
        (50_000, 340.0, 55.0),
    ] {
        for (mode, ms) in [("scan", scan_ms), ("catalog", catalog_ms)] {
            let mut row = summarise(topics, mode, vec![ms]);
            row.floor_ms = Some(ms / 2.0);
            results.push(row);
        }
    }
    LatencyReport {
        profile: "release",
        budget_ms: BUDGET_MS,
        results,
    }
}

#[test]
fn the_chart_draws_and_names_each_series_once_in_its_colour_when_modes_interleave() {
    use line_chart::drawn::{LEGEND_LEFT, Line, hex, lines, texts};

    let svg = chart(&interleaved_report()).to_svg().unwrap();
    let (scan, catalog, budget) = (hex(PALETTE[0]), hex(PALETTE[1]), hex(BUDGET_COLOUR));
    // (label, colour, dashed) per series, in drawing order.
    let expected = [
        ("scan: median", &scan, false),
        ("scan: floor", &scan, true),
        ("catalog: median", &catalog, false),
        ("catalog: floor", &catalog, true),
        ("budget: 100 ms", &budget, true),
    ];
    let seen = |lines: &[Line]| -> Vec<(String, bool)> {
        lines
            .iter()
            .map(|line| (line.colour.clone(), line.pieces > 1))
            .collect()
    };
    let wanted: Vec<(String, bool)> = expected
        .iter()
        .map(|&(_, colour, dashed)| (colour.clone(), dashed))
        .collect();

    let plotted = lines(&svg, 2, false);
    assert_eq!(seen(&plotted), wanted, "{svg}");
    for median in [&plotted[0], &plotted[2]] {
        assert_eq!(median.points.len(), 3, "one point per size: {median:?}");
    }

    let texts = texts(&svg);
    for (label, _, _) in expected {
        let count = texts.iter().filter(|text| text.2 == label).count();
        assert_eq!(count, 1, "{label:?} is named {count} times");
    }
    let legend_texts: Vec<&(i32, i32, String)> =
        texts.iter().filter(|text| text.0 >= LEGEND_LEFT).collect();
    let labels: Vec<&str> = legend_texts.iter().map(|text| text.2.as_str()).collect();
    assert_eq!(labels, expected.map(|(label, _, _)| label));
    let samples = lines(&svg, 2, true);
    assert_eq!(seen(&samples), wanted);
    for (sample, text) in samples.iter().zip(legend_texts) {
        assert!(
            sample.points.iter().all(|point| point.1 == text.1),
            "the sample of {:?} is not on its row: {sample:?}",
            text.2
        );
    }
}
