//! Line charts of the latency reports, drawn as SVG with `plotters`.
//!
//! A [`LineChart`] is a set of named series over one x and one y axis, with optional horizontal
//! reference lines (a budget). Each series and reference line is drawn once, in its own colour,
//! solid or dashed, and named once in a legend column right of the plot, each entry showing its
//! line's colour and dash. Text is left to the SVG viewer's fonts: nothing is rasterised here,
//! so no font files are needed.

use anyhow::{Result, bail, ensure};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of the whole picture, in pixels.
const WIDTH: u32 = 820;
/// Height of the whole picture, in pixels.
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
const FONT: &str = "sans-serif";

/// Colours for series, in order: distinct for the colour-blind and in greyscale print.
pub(crate) const PALETTE: [RGBColor; 4] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xe6, 0x7e, 0x00),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
];

/// The colour of budget lines.
pub(crate) const BUDGET_COLOUR: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// One line through its points, in x order.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// The legend's name for it.
    pub label: String,
    pub colour: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A horizontal line across the whole plot, such as a budget.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    pub label: String,
    pub colour: RGBColor,
    pub y: f64,
}

/// Everything a chart shows. Both axes are logarithmic, so every coordinate must be positive:
/// latencies across sizes that span decades then all stay readable, and a cost that grows in
/// proportion to size is a straight line.
#[derive(Debug, Clone)]
pub(crate) struct LineChart {
    pub title: String,
    /// The x axis title, with its unit.
    pub x_title: String,
    /// The y axis title, with its unit.
    pub y_title: String,
    pub series: Vec<Series>,
    pub references: Vec<Reference>,
}

impl LineChart {
    /// The chart as an SVG document.
    pub(crate) fn to_svg(&self) -> Result<String> {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        ensure!(
            points().next().is_some(),
            "a chart needs at least one point"
        );
        ensure!(
            points().all(|&(x, y)| x.is_finite() && y.is_finite()),
            "a chart's points must be finite"
        );
        let bounds = |values: &mut dyn Iterator<Item = f64>| {
            values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
        };
        let (x_min, x_max) = bounds(&mut points().map(|p| p.0));
        // Reference lines are horizontal: they bound y only.
        let (y_min, y_max) = bounds(
            &mut points()
                .map(|p| p.1)
                .chain(self.references.iter().map(|r| r.y)),
        );
        if x_min <= 0.0 || y_min <= 0.0 {
            bail!("logarithmic axes cannot show x = {x_min} or y = {y_min}");
        }
        // A fifth of a decade either side, so the end points sit clear of the axes.
        let pad = 10f64.powf(0.2);
        let axis = |min: f64, max: f64| {
            let (start, end) = (min / pad, max * pad);
            (start..end)
                .log_scale()
                .with_key_points(one_two_five(start, end))
        };
        let mut svg = String::new();
        self.draw(&mut svg, axis(x_min, x_max), axis(y_min, y_max))?;
        Ok(svg)
    }

    fn draw<X, Y>(&self, svg: &mut String, x_range: X, y_range: Y) -> Result<()>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
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
        for reference in &self.references {
            chart.draw_series(DashedLineSeries::new(
                [(x_start, reference.y), (x_end, reference.y)],
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
        root.present()?;
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
}

/// Reading back what [`LineChart::to_svg`] drew, from the SVG text alone.
#[cfg(test)]
pub(crate) mod drawn {
    use plotters::style::RGBColor;

    /// Where the legend column starts, in SVG pixels.
    pub(crate) const LEGEND_LEFT: i32 = super::PLOT_WIDTH.cast_signed();

    /// A colour as the SVG writes it.
    pub(crate) fn hex(colour: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", colour.0, colour.1, colour.2)
    }

    /// One drawn line, seen as the legend or the plot shows it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct Line {
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
    pub(crate) fn texts(svg: &str) -> Vec<(i32, i32, String)> {
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
    pub(crate) fn lines(svg: &str, stroke_width: u32, legend: bool) -> Vec<Line> {
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
