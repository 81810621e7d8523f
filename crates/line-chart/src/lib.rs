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

use plotters::prelude::*;

mod bar;
mod line;
mod ticks;

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

#[cfg(test)]
mod tests;

/// Reading back what [`stack_svg`] drew, from the SVG text alone (with the `drawn` feature).
///
/// For tests of this crate's users: these readers expect a document this crate drew and panic
/// on anything else.
#[cfg(any(test, feature = "drawn"))]
pub mod drawn;
