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
