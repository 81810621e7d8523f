//! Drawing a [`BarChart`]: a title band, then one row per bar with its label, bar and value.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{
    Area, BAR_LEFT, BAR_LENGTH, BAR_ROW, BAR_TITLE, BarChart, ChartError, FONT, Panel, WIDTH,
    stack_svg,
};

impl BarChart {
    pub(crate) fn check(&self) -> Result<(), ChartError> {
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

    pub(crate) fn draw_on(&self, area: &Area<'_>) -> Result<(), ChartError> {
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
