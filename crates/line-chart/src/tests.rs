use super::*;
use crate::ticks::tick_label;

#[test]
fn tick_labels_separate_thousands_and_keep_the_significant_digit_below_one() {
    let labels: Vec<String> = [0.02, 0.5, 1.0, 20.0, 1_000.0, 50_000.0, 2_000_000.0]
        .map(tick_label)
        .into();
    assert_eq!(
        labels,
        ["0.02", "0.5", "1", "20", "1,000", "50,000", "2,000,000"]
    );
}

fn chart(x_scale: Scale, points: Vec<(f64, f64)>, references: Vec<Reference>) -> LineChart {
    LineChart {
        title: "t".into(),
        x_title: "x".into(),
        y_title: "y".into(),
        x_scale,
        y_scale: Scale::Linear,
        series: vec![Series {
            label: "only".into(),
            colour: PALETTE[0],
            dashed: false,
            points,
        }],
        references,
    }
}

#[test]
fn a_logarithmic_axis_refuses_zero_with_an_error() {
    let error = chart(Scale::Logarithmic, vec![(0.0, 1.0), (2.0, 3.0)], vec![])
        .to_svg()
        .unwrap_err();
    assert!(
        matches!(error, ChartError::NotPositive { value } if value == 0.0),
        "{error}"
    );
}

#[test]
fn a_chart_without_points_is_an_error() {
    let error = chart(Scale::Linear, vec![], vec![]).to_svg().unwrap_err();
    assert!(matches!(error, ChartError::Empty), "{error}");
}

#[test]
fn a_vertical_reference_is_drawn_top_to_bottom_and_named_once() {
    let svg = chart(
        Scale::Logarithmic,
        vec![(1.0, 0.0), (10.0, 50.0), (1_000.0, 100.0)],
        vec![Reference {
            label: "budget".into(),
            colour: BUDGET_COLOUR,
            at: Level::X(100.0),
        }],
    )
    .to_svg()
    .unwrap();
    let plotted = drawn::lines(&svg, STROKE, false);
    let budget = plotted
        .iter()
        .find(|l| l.colour == drawn::hex(BUDGET_COLOUR))
        .expect("the budget line is drawn");
    assert!(budget.pieces > 1, "dashed: {budget:?}");
    let xs: Vec<i32> = budget.points.iter().map(|p| p.0).collect();
    assert!(xs.iter().all(|&x| x == xs[0]), "vertical: {budget:?}");
    let named = drawn::texts(&svg)
        .iter()
        .filter(|t| t.2 == "budget")
        .count();
    assert_eq!(named, 1);
}

#[test]
fn bars_are_as_long_as_their_share_of_the_full_scale_and_each_is_named() {
    let bars = BarChart {
        title: "shares".into(),
        full_scale: 1.0,
        bars: vec![
            Bar {
                label: "half".into(),
                value: 0.5,
                note: "50%".into(),
                colour: PALETTE[0],
            },
            Bar {
                label: "all".into(),
                value: 1.0,
                note: "100%".into(),
                colour: PALETTE[1],
            },
            Bar {
                label: "none".into(),
                value: 0.0,
                note: "0%".into(),
                colour: PALETTE[2],
            },
        ],
    };
    let svg = bars.to_svg().unwrap();
    let rects = drawn::rects(&svg);
    let widths: Vec<(String, i32)> = rects.into_iter().map(|r| (r.colour, r.width)).collect();
    assert_eq!(
        widths,
        [
            (drawn::hex(PALETTE[0]), BAR_LENGTH / 2),
            (drawn::hex(PALETTE[1]), BAR_LENGTH)
        ]
    );
    let texts = drawn::texts(&svg);
    for label in ["shares", "half", "all", "none", "50%", "100%", "0%"] {
        assert_eq!(texts.iter().filter(|t| t.2 == label).count(), 1, "{label}");
    }
}
