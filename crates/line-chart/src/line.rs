//! Drawing a [`LineChart`]: its bounds checked against the scales, its axes, series, reference
//! lines and legend.

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::ticks::{one_two_five, tick_label};
use crate::{
    Area, ChartError, DASH, FONT, LEGEND_ROW, LEGEND_SAMPLE, Level, LineChart, PLOT_WIDTH, Panel,
    STROKE, Scale, Span, stack_svg,
};

impl LineChart {
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        stack_svg(&[Panel::Lines(self)])
    }

    /// The bounds of the points (reference lines included), checked against the scales:
    /// `((x_min, x_max), (y_min, y_max))`.
    pub(crate) fn check(&self) -> Result<(Span, Span), ChartError> {
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

    pub(crate) fn draw_on(&self, area: &Area<'_>) -> Result<(), ChartError> {
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
