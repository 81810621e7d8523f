//! Line and bar charts drawn as SVG text with `plotters`.
//!
//! A [`LineChart`] is a set of named series over one x and one y axis (each linear or
//! logarithmic), with optional reference lines across the plot (a budget), horizontal or
//! vertical. Each series and reference line is drawn once, in its own colour, solid or dashed,
//! and named once in a legend column right of the plot, each entry showing its line's colour and
//! dash. A [`BarChart`] is a column of named horizontal bars, each with its value written beside
//! it. [`stack_svg`] puts several charts one above the other in one picture.
//!
//! Text is left to the SVG viewer's fonts: nothing is rasterised here, so no font files are
//! needed. This crate knows nothing of what is measured; its callers name the series.
//!
//! With the `drawn` feature, the `drawn` module reads a chart back from its SVG text, for tests.
//!
//! ```
//! use line_chart::{LineChart, Reference, Level, Scale, Series, RGBColor};
//!
//! let chart = LineChart {
//!     title: "Recall call to fast result".into(),
//!     x_title: "topics".into(),
//!     y_title: "milliseconds".into(),
//!     x_scale: Scale::Logarithmic,
//!     y_scale: Scale::Logarithmic,
//!     series: vec![Series {
//!         label: "scan: median".into(),
//!         colour: RGBColor(31, 119, 180),
//!         dashed: false,
//!         points: vec![(1_000.0, 2.5), (10_000.0, 21.0)],
//!     }],
//!     references: vec![Reference {
//!         label: "budget: 100 ms".into(),
//!         colour: RGBColor(214, 39, 40),
//!         at: Level::Y(100.0),
//!     }],
//! };
//! let svg = chart.to_svg()?;
//! assert!(svg.contains("scan: median") && svg.contains("budget: 100 ms"));
//! # Ok::<(), line_chart::ChartError>(())
//! ```

#![forbid(unsafe_code)]

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use plotters::style::RGBColor;

/// Width of the whole picture, in pixels.
const WIDTH: u32 = 820;
/// Height of a line chart, in pixels.
const HEIGHT: u32 = 460;
/// Width of the plot, title and axes included; the legend column takes the rest.
const PLOT_WIDTH: u32 = 640;
/// Stroke width of every line, in pixels.
const STROKE: u32 = 2;
/// Length of a dash and of the gap after it, in pixels.
const DASH: (i32, i32) = (8, 5);
/// Height of one legend row, in pixels.
const LEGEND_ROW: i32 = 22;
/// Length of a legend entry's line sample, in pixels.
const LEGEND_SAMPLE: i32 = 30;
/// Height of a bar chart's title band, in pixels.
const BAR_TITLE: i32 = 48;
/// Height of one bar's row, in pixels.
const BAR_ROW: i32 = 26;
/// Where a bar starts, right of its label, in pixels.
const BAR_LEFT: i32 = 330;
/// The longest bar, in pixels (its value written after it).
const BAR_LENGTH: i32 = 380;
const FONT: &str = "sans-serif";

/// Colours for series, in order: distinct for the colour-blind and in greyscale print.
pub const PALETTE: [RGBColor; 4] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xe6, 0x7e, 0x00),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
];

/// The colour of budget lines.
pub const BUDGET_COLOUR: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// Why a chart cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// A line chart without a single point, or a bar chart without a bar.
    #[error("a chart needs at least one point")]
    Empty,
    /// A coordinate is infinite or not a number.
    #[error("a chart's points must be finite")]
    NotFinite,
    /// A logarithmic axis was given zero or a negative value.
    #[error("a logarithmic axis cannot show {value}")]
    NotPositive {
        /// The value.
        value: f64,
    },
    /// The drawing library failed.
    #[error("cannot draw the chart: {0}")]
    Draw(#[source] DrawingAreaErrorKind<std::io::Error>),
}

impl From<DrawingAreaErrorKind<std::io::Error>> for ChartError {
    fn from(error: DrawingAreaErrorKind<std::io::Error>) -> Self {
        Self::Draw(error)
    }
}

/// One line through its points, in x order.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend's name for it.
    pub label: String,
    /// Its colour (see [`PALETTE`]).
    pub colour: RGBColor,
    /// Dashed, without point marks, instead of solid with a mark on each point.
    pub dashed: bool,
    /// Its points, `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

/// Where a reference line crosses the plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    /// A horizontal line at this y.
    Y(f64),
    /// A vertical line at this x.
    X(f64),
}

/// A dashed line across the whole plot, such as a budget.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The legend's name for it.
    pub label: String,
    /// Its colour (see [`BUDGET_COLOUR`]).
    pub colour: RGBColor,
    /// Where it is.
    pub at: Level,
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal steps for equal differences, padded by a twentieth of the span either side.
    Linear,
    /// Equal steps for equal ratios, padded by a fifth of a decade either side, ticks at 1, 2
    /// and 5 times a power of ten: latencies that span decades all stay readable, and a cost
    /// growing in proportion to size is a straight line. Every value must be positive.
    Logarithmic,
}

/// Everything a line chart shows.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// The title above the plot.
    pub title: String,
    /// The x axis title, with its unit.
    pub x_title: String,
    /// The y axis title, with its unit.
    pub y_title: String,
    /// How the x axis maps values.
    pub x_scale: Scale,
    /// How the y axis maps values.
    pub y_scale: Scale,
    /// The lines, drawn and named in this order.
    pub series: Vec<Series>,
    /// The reference lines, drawn and named after the series.
    pub references: Vec<Reference>,
}

/// One bar of a [`BarChart`].
#[derive(Debug, Clone)]
pub struct Bar {
    /// The name written left of the bar.
    pub label: String,
    /// Its length, from 0 to the chart's `full_scale`.
    pub value: f64,
    /// What is written right of the bar, e.g. `42% (21)`.
    pub note: String,
    /// Its colour.
    pub colour: RGBColor,
}

/// A column of horizontal bars, one per row, each as long as its value against `full_scale`.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// The title above the bars.
    pub title: String,
    /// The value of a bar of full length (e.g. 1 for shares); longer values are cut to it.
    pub full_scale: f64,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// One chart of a picture made by [`stack_svg`].
#[derive(Debug, Clone, Copy)]
pub enum Panel<'a> {
    /// A line chart.
    Lines(&'a LineChart),
    /// A bar chart.
    Bars(&'a BarChart),
}

impl Panel<'_> {
    fn height(self) -> u32 {
        match self {
            Self::Lines(_) => HEIGHT,
            Self::Bars(bars) => {
                let rows = i32::try_from(bars.bars.len()).unwrap_or(i32::MAX);
                (BAR_TITLE + BAR_ROW * rows + BAR_ROW / 2).unsigned_abs()
            }
        }
    }
}

/// The panels one above the other, in order, as one SVG document.
pub fn stack_svg(panels: &[Panel<'_>]) -> Result<String, ChartError> {
    if panels.is_empty() {
        return Err(ChartError::Empty);
    }
    for panel in panels {
        match panel {
            Panel::Lines(chart) => {
                chart.check()?;
            }
            Panel::Bars(chart) => chart.check()?,
        }
    }
    let height = panels.iter().map(|p| p.height()).sum();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut rest = root.clone();
        for panel in panels {
            let (area, below) = rest.split_vertically(panel.height());
            match panel {
                Panel::Lines(chart) => chart.draw_on(&area)?,
                Panel::Bars(chart) => chart.draw_on(&area)?,
            }
            rest = below;
        }
        root.present()?;
    }
    Ok(svg)
}

/// The lowest and highest value on an axis.
type Span = (f64, f64);

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

impl LineChart {
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        stack_svg(&[Panel::Lines(self)])
    }

    /// The bounds of the points (reference lines included), checked against the scales:
    /// `((x_min, x_max), (y_min, y_max))`.
    fn check(&self) -> Result<(Span, Span), ChartError> {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        if points().next().is_none() {
            return Err(ChartError::Empty);
        }
        let levels = self.references.iter().map(|r| match r.at {
            Level::X(v) | Level::Y(v) => v,
        });
        if !points()
            .flat_map(|&(x, y)| [x, y])
            .chain(levels)
            .all(f64::is_finite)
        {
            return Err(ChartError::NotFinite);
        }
        let bounds = |values: &mut dyn Iterator<Item = f64>| {
            values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
        };
        // A reference line bounds the axis it crosses.
        let x = bounds(
            &mut points()
                .map(|p| p.0)
                .chain(self.references.iter().filter_map(|r| {
                    if let Level::X(x) = r.at {
                        Some(x)
                    } else {
                        None
                    }
                })),
        );
        let y = bounds(
            &mut points()
                .map(|p| p.1)
                .chain(self.references.iter().filter_map(|r| {
                    if let Level::Y(y) = r.at {
                        Some(y)
                    } else {
                        None
                    }
                })),
        );
        for (scale, (min, _)) in [(self.x_scale, x), (self.y_scale, y)] {
            if scale == Scale::Logarithmic && min <= 0.0 {
                return Err(ChartError::NotPositive { value: min });
            }
        }
        Ok((x, y))
    }

    fn draw_on(&self, area: &Area<'_>) -> Result<(), ChartError> {
        let ((x_min, x_max), (y_min, y_max)) = self.check()?;
        // A fifth of a decade either side, so the end points sit clear of the axes.
        let pad = 10f64.powf(0.2);
        let log = |min: f64, max: f64| {
            let (start, end) = (min / pad, max * pad);
            (start..end)
                .log_scale()
                .with_key_points(one_two_five(start, end))
        };
        let linear = |min: f64, max: f64| {
            let span = if max > min { max - min } else { 1.0 };
            let start = min - span / 20.0;
            // A scale of values that cannot be negative does not reach below zero.
            let start = if min >= 0.0 { start.max(0.0) } else { start };
            start..max + span / 20.0
        };
        match (self.x_scale, self.y_scale) {
            (Scale::Logarithmic, Scale::Logarithmic) => {
                self.draw(area, log(x_min, x_max), log(y_min, y_max))
            }
            (Scale::Logarithmic, Scale::Linear) => {
                self.draw(area, log(x_min, x_max), linear(y_min, y_max))
            }
            (Scale::Linear, Scale::Logarithmic) => {
                self.draw(area, linear(x_min, x_max), log(y_min, y_max))
            }
            (Scale::Linear, Scale::Linear) => {
                self.draw(area, linear(x_min, x_max), linear(y_min, y_max))
            }
        }
    }

    fn draw<X, Y>(&self, root: &Area<'_>, x_range: X, y_range: Y) -> Result<(), ChartError>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (plot_area, legend_area) = root.split_horizontally(PLOT_WIDTH);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, (FONT, 21))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(58)
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_title)
            .y_desc(&self.y_title)
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .draw()?;

        let style = |colour: RGBColor| colour.stroke_width(STROKE);
        let mut legend = Vec::new();
        for series in &self.series {
            let line = series.points.iter().copied();
            if series.dashed {
                chart.draw_series(DashedLineSeries::new(
                    line,
                    DASH.0,
                    DASH.1,
                    style(series.colour),
                ))?;
            } else {
                chart.draw_series(LineSeries::new(line, style(series.colour)))?;
                chart.draw_series(
                    series
                        .points
                        .iter()
                        .map(|&p| Circle::new(p, 3, series.colour.filled())),
                )?;
            }
            legend.push((&series.label, series.colour, series.dashed));
        }
        let (x_start, x_end) = {
            let range = chart.x_range();
            (range.start, range.end)
        };
        let (y_start, y_end) = {
            let range = chart.y_range();
            (range.start, range.end)
        };
        for reference in &self.references {
            let ends = match reference.at {
                Level::Y(y) => [(x_start, y), (x_end, y)],
                Level::X(x) => [(x, y_start), (x, y_end)],
            };
            chart.draw_series(DashedLineSeries::new(
                ends,
                DASH.0,
                DASH.1,
                style(reference.colour),
            ))?;
            legend.push((&reference.label, reference.colour, true));
        }

        let top = 46;
        for (row, (label, colour, dashed)) in (0..).zip(legend) {
            let y = top + row * LEGEND_ROW;
            let sample = [(8, y), (8 + LEGEND_SAMPLE, y)];
            if dashed {
                legend_area.draw(&DashedPathElement::new(
                    sample,
                    DASH.0,
                    DASH.1,
                    style(colour),
                ))?;
            } else {
                legend_area.draw(&PathElement::new(sample, style(colour)))?;
            }
            legend_area.draw(&Text::new(
                label.as_str(),
                (16 + LEGEND_SAMPLE, y),
                TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}

impl BarChart {
    fn check(&self) -> Result<(), ChartError> {
        if self.bars.is_empty() {
            return Err(ChartError::Empty);
        }
        if !self.full_scale.is_finite()
            || self.full_scale <= 0.0
            || !self.bars.iter().all(|b| b.value.is_finite())
        {
            return Err(ChartError::NotFinite);
        }
        Ok(())
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        stack_svg(&[Panel::Bars(self)])
    }

    fn draw_on(&self, area: &Area<'_>) -> Result<(), ChartError> {
        let centre = |pos| TextStyle::from((FONT, 15).into_font()).pos(pos);
        area.draw(&Text::new(
            self.title.as_str(),
            (i32::try_from(WIDTH / 2).unwrap_or(0), BAR_TITLE / 2),
            TextStyle::from((FONT, 21).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        for (row, bar) in (0..).zip(&self.bars) {
            let middle = BAR_TITLE + row * BAR_ROW + BAR_ROW / 2;
            area.draw(&Text::new(
                bar.label.as_str(),
                (BAR_LEFT - 10, middle),
                centre(Pos::new(HPos::Right, VPos::Center)),
            ))?;
            let share = (bar.value / self.full_scale).clamp(0.0, 1.0);
            // At most BAR_LENGTH pixels; the cast keeps the whole pixels.
            #[allow(clippy::cast_possible_truncation)]
            let length = (share * f64::from(BAR_LENGTH)).round() as i32;
            if length > 0 {
                area.draw(&Rectangle::new(
                    [
                        (BAR_LEFT, middle - BAR_ROW / 3),
                        (BAR_LEFT + length, middle + BAR_ROW / 3),
                    ],
                    bar.colour.filled(),
                ))?;
            }
            area.draw(&Text::new(
                bar.note.as_str(),
                (BAR_LEFT + length + 8, middle),
                centre(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}

/// The numbers 1, 2 and 5 times a power of ten from `start` to `end`: ticks a reader can
/// interpolate between on a logarithmic axis.
fn one_two_five(start: f64, end: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(start.log10().floor());
    while decade <= end {
        for step in [1.0, 2.0, 5.0] {
            let tick = decade * step;
            if (start..=end).contains(&tick) {
                ticks.push(tick);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// A tick of [`one_two_five`] as a reader writes it: `12,345` from 1 up, with thousands
/// separators; below 1 with its one significant digit, `0.5`, `0.02`.
fn tick_label(value: f64) -> String {
    if value.abs() >= 1.0 || value == 0.0 {
        return thousands(value);
    }
    let decimals = -value.abs().log10().floor();
    // At most 15 for any tick an f64 chart can show; the cast keeps the integer part.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let decimals = decimals.clamp(0.0, 15.0) as usize;
    format!("{value:.decimals$}")
}

/// `12345.0` as `12,345`: whole numbers with thousands separators.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < -0.5 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// Reading back what [`stack_svg`] drew, from the SVG text alone (with the `drawn` feature).
///
/// For tests of this crate's users: these readers expect a document this crate drew and panic
/// on anything else.
#[cfg(any(test, feature = "drawn"))]
pub mod drawn {
    use plotters::style::RGBColor;

    /// Where the legend column starts, in SVG pixels.
    pub const LEGEND_LEFT: i32 = super::PLOT_WIDTH.cast_signed();

    /// A colour as the SVG writes it.
    pub fn hex(colour: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", colour.0, colour.1, colour.2)
    }

    /// One filled rectangle (a bar).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Rect {
        /// Its fill colour, as [`hex`] writes it.
        pub colour: String,
        /// Its width, in SVG pixels.
        pub width: i32,
    }

    /// Every filled `<rect>` but the white background, in drawing order.
    pub fn rects(svg: &str) -> Vec<Rect> {
        tags(svg, "rect")
            .filter_map(|(tag, _)| {
                let colour = attribute(tag, "fill")?.to_owned();
                (colour != "#FFFFFF").then(|| Rect {
                    colour,
                    width: attribute(tag, "width").unwrap().parse().unwrap(),
                })
            })
            .collect()
    }

    /// One drawn line, seen as the legend or the plot shows it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Line {
        /// Its stroke colour, as [`hex`] writes it.
        pub colour: String,
        /// How many `<polyline>` pieces draw it: 1 when solid, one per dash when dashed.
        pub pieces: usize,
        /// The points of all its pieces.
        pub points: Vec<(i32, i32)>,
    }

    /// `name="value"` of one tag.
    fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let len = tag[start..].find('"')?;
        Some(&tag[start..start + len])
    }

    /// Every tag `<name …>` of the document, with what follows it up to the next tag.
    fn tags<'a>(svg: &'a str, name: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        svg.split('<')
            .filter(move |piece| piece.starts_with(&format!("{name} ")))
            .filter_map(|piece| piece.split_once('>'))
    }

    /// Every `<text>`: its position and content.
    pub fn texts(svg: &str) -> Vec<(i32, i32, String)> {
        tags(svg, "text")
            .map(|(tag, content)| {
                let number = |name| attribute(tag, name).unwrap().parse().unwrap();
                (number("x"), number("y"), content.trim().to_owned())
            })
            .collect()
    }

    /// The lines of `stroke_width`, left of `LEGEND_LEFT` (`legend` false) or right of it, in
    /// the order they were drawn. Consecutive pieces of one colour are one line as long as each
    /// starts where or right of where the one before ended: a dashed line's dashes.
    pub fn lines(svg: &str, stroke_width: u32, legend: bool) -> Vec<Line> {
        let mut lines: Vec<Line> = Vec::new();
        for (tag, _) in tags(svg, "polyline") {
            if attribute(tag, "stroke-width") != Some(&stroke_width.to_string()) {
                continue;
            }
            let points: Vec<(i32, i32)> = attribute(tag, "points")
                .unwrap()
                .split_whitespace()
                .map(|point| {
                    let (x, y) = point.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            if (points[0].0 >= LEGEND_LEFT) != legend {
                continue;
            }
            let colour = attribute(tag, "stroke").unwrap().to_owned();
            match lines.last_mut() {
                Some(line)
                    if line.colour == colour
                        && line.points.last().is_some_and(|end| end.0 <= points[0].0) =>
                {
                    line.pieces += 1;
                    line.points.extend(points);
                }
                _ => lines.push(Line {
                    colour,
                    pieces: 1,
                    points,
                }),
            }
        }
        lines
    }
}
