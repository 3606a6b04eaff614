//! SVG plots drawn with plotters' SVG backend and its built-in text metrics (no system fonts).
//!
//! Lines break at NaN (a flow that has not started has no throughput to draw, which is not the
//! same as zero), axis ranges ignore NaN, and a degenerate range (all values equal) is widened so
//! the plot still has an axis. Legends sit in a column right of the data, so ten flows' names
//! never cover their lines.

use crate::error::MetricsError;
use plotters::prelude::*;

/// One named line: (x, y) points in order.
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Error bars: the half-width at each point (same length as `points`), drawn as y ± e;
    /// empty for none. A sweep's report draws one standard deviation over seeds.
    pub spread: Vec<f64>,
}

/// One labelled point of a scatter plot; points of the same group share a color. An empty label
/// draws the point alone (a cloud of runs around a labelled mean).
pub struct Point {
    pub group: String,
    pub label: String,
    pub x: f64,
    pub y: f64,
}

/// Events drawn as glyphs over a line chart (a flow's losses on its cwnd line), in the color of
/// the line `line` (an index into the chart's lines).
pub struct Marks {
    pub name: String,
    pub line: usize,
    pub glyph: Glyph,
    pub points: Vec<(f64, f64)>,
}

/// A point glyph; the trade-off plot gives each controller its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Glyph {
    Circle,
    Triangle,
    Square,
    Cross,
    Diamond,
}

impl Glyph {
    pub const ALL: [Glyph; 5] = [
        Glyph::Circle,
        Glyph::Triangle,
        Glyph::Square,
        Glyph::Cross,
        Glyph::Diamond,
    ];
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Draw `glyph` of size `r` at each of `points`.
fn draw_glyphs(
    chart: &mut Chart<'_, '_>,
    glyph: Glyph,
    points: Vec<(f64, f64)>,
    r: i32,
    style: ShapeStyle,
    title: &str,
) -> Result<(), MetricsError> {
    let at = |p| EmptyElement::at(p);
    let drawn = match glyph {
        Glyph::Circle => chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| at(p) + Circle::new((0, 0), r, style)),
            )
            .map(|_| ()),
        Glyph::Triangle => chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| at(p) + TriangleMarker::new((0, 0), r + 1, style)),
            )
            .map(|_| ()),
        Glyph::Square => chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| at(p) + Rectangle::new([(-r, -r), (r, r)], style)),
            )
            .map(|_| ()),
        Glyph::Cross => chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| at(p) + Cross::new((0, 0), r, style.stroke_width(2))),
            )
            .map(|_| ()),
        Glyph::Diamond => chart
            .draw_series(points.into_iter().map(|p| {
                at(p)
                    + Polygon::new(
                        vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
                        style,
                    )
            }))
            .map(|_| ()),
    };
    drawn.map_err(|e| err(title, e))
}

pub const WIDTH: u32 = 860;
pub const HEIGHT: u32 = 340;
/// The legend column right of the data.
const LEGEND_W: u32 = 190;

fn err(plot: &str, e: impl std::fmt::Display) -> MetricsError {
    MetricsError::Plot {
        plot: plot.to_string(),
        message: e.to_string(),
    }
}

fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        return (lo - pad, hi + pad);
    }
    hi += (hi - lo) * 0.05;
    (lo, hi)
}

/// The color of line or group `i`: distinguishable for the first ten (a 10-flow run), then
/// Palette99's.
pub fn color(i: usize) -> RGBColor {
    // Tableau 10: distinct in print and for the common color-vision deficiencies.
    const TEN: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    if let Some(&(r, g, b)) = TEN.get(i) {
        return RGBColor(r, g, b);
    }
    palette(i)
}

fn palette(i: usize) -> RGBColor {
    // Palette99 is designed for distinguishable lines; index it directly.
    let c = Palette99::pick(i).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

/// Split a polyline into runs of finite points.
fn segments(points: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new()];
    for &(x, y) in points {
        if x.is_finite() && y.is_finite() {
            out.last_mut().expect("never empty").push((x, y));
        } else if !out.last().expect("never empty").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// One legend row: a line sample or a glyph, in a color.
enum Key {
    Line(RGBColor),
    Glyph(Glyph, RGBColor),
}

/// Draw the legend column: one row per entry, cut with a "+N more" row when they do not fit.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    entries: &[(String, Key)],
    title: &str,
) -> Result<(), MetricsError> {
    const ROW: i32 = 17;
    let rows = ((HEIGHT as i32 - 40) / ROW) as usize;
    let font = ("sans-serif", 13).into_font();
    for (k, (name, key)) in entries.iter().enumerate() {
        let y = 40 + k as i32 * ROW;
        if k + 1 == rows && entries.len() > rows {
            area.draw(&Text::new(
                format!("+{} more", entries.len() - k),
                (8, y - 7),
                font.clone(),
            ))
            .map_err(|e| err(title, e))?;
            break;
        }
        match key {
            Key::Line(c) => area
                .draw(&PathElement::new(vec![(6, y), (26, y)], c.stroke_width(2)))
                .map_err(|e| err(title, e))?,
            Key::Glyph(g, c) => {
                let r = 4;
                let e = EmptyElement::at((16, y));
                let style = c.filled();
                match g {
                    Glyph::Circle => area.draw(&(e + Circle::new((0, 0), r, style))),
                    Glyph::Triangle => area.draw(&(e + TriangleMarker::new((0, 0), r + 1, style))),
                    Glyph::Square => area.draw(&(e + Rectangle::new([(-r, -r), (r, r)], style))),
                    Glyph::Cross => area.draw(&(e + Cross::new((0, 0), r, style.stroke_width(2)))),
                    Glyph::Diamond => area.draw(
                        &(e + Polygon::new(
                            vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
                            style,
                        )),
                    ),
                }
                .map_err(|e| err(title, e))?
            }
        }
        area.draw(&Text::new(name.clone(), (32, y - 7), font.clone()))
            .map_err(|e| err(title, e))?;
    }
    Ok(())
}

/// A line chart as an SVG document.
pub fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<String, MetricsError> {
    line_chart_marked(title, x_desc, y_desc, lines, &[])
}

/// A line chart with event glyphs over its lines (losses and retransmissions on cwnd).
pub fn line_chart_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    marks: &[Marks],
) -> Result<String, MetricsError> {
    let mut svg = String::new();
    {
        let whole = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        whole.fill(&WHITE).map_err(|e| err(title, e))?;
        let (root, side) = whole.split_horizontally(WIDTH - LEGEND_W);
        let (x0, x1) = range(
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
            false,
        );
        let (y0, y1) = range(
            lines.iter().flat_map(|l| {
                l.points.iter().enumerate().flat_map(|(i, p)| {
                    let e = l.spread.get(i).copied().unwrap_or(0.0);
                    [p.1 - e, p.1 + e]
                })
            }),
            true,
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", caption_size(title)))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        let mut keys = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let c = color(i);
            for seg in segments(&line.points) {
                chart
                    .draw_series(LineSeries::new(seg, c.stroke_width(2)))
                    .map_err(|e| err(title, e))?;
            }
            keys.push((line.name.clone(), Key::Line(c)));
            // Error bars: a vertical stroke with short caps, in the line's color.
            let caps = (x1 - x0) * 0.006;
            for (&(x, y), &e) in line.points.iter().zip(&line.spread) {
                if !(x.is_finite() && y.is_finite() && e.is_finite() && e > 0.0) {
                    continue;
                }
                let bar = [
                    vec![(x, y - e), (x, y + e)],
                    vec![(x - caps, y - e), (x + caps, y - e)],
                    vec![(x - caps, y + e), (x + caps, y + e)],
                ];
                chart
                    .draw_series(
                        bar.into_iter()
                            .map(|p| PathElement::new(p, c.stroke_width(1))),
                    )
                    .map_err(|e| err(title, e))?;
            }
        }
        for m in marks {
            let c = color(m.line);
            let finite = m
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite());
            draw_glyphs(
                &mut chart,
                m.glyph,
                finite.copied().collect(),
                4,
                c.filled(),
                title,
            )?;
            keys.push((m.name.clone(), Key::Glyph(m.glyph, c)));
        }
        legend(&side, &keys, title)?;
        whole.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// Throughput against delay in Pantheon's style: one color and glyph per group (controller),
/// the delay axis inverted so that better (less delay, more throughput) is up and to the right.
pub fn tradeoff_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    points: &[Point],
) -> Result<String, MetricsError> {
    let mut svg = String::new();
    {
        let whole = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        whole.fill(&WHITE).map_err(|e| err(title, e))?;
        let (root, side) = whole.split_horizontally(WIDTH - LEGEND_W);
        let (x0, x1) = range(points.iter().map(|p| p.x), true);
        let (y0, y1) = range(points.iter().map(|p| p.y), true);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", caption_size(title)))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            // Inverted: the largest delay at the left.
            .build_cartesian_2d(x1..x0, y0..y1)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        let groups = groups(points);
        let mut keys = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let (c, glyph) = (color(i), Glyph::ALL[i % Glyph::ALL.len()]);
            // Windows as small pale glyphs, a flow's whole-run point (labelled) large and solid.
            for labelled in [false, true] {
                let mine: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|p| p.group == *g && p.x.is_finite() && p.y.is_finite())
                    .filter(|p| p.label.is_empty() != labelled)
                    .map(|p| (p.x, p.y))
                    .collect();
                let (r, fill) = if labelled {
                    (6, c.filled())
                } else {
                    (3, c.mix(0.55).filled())
                };
                draw_glyphs(&mut chart, glyph, mine, r, fill, title)?;
            }
            keys.push((g.to_string(), Key::Glyph(glyph, c)));
        }
        legend(&side, &keys, title)?;
        whole.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// The points' groups, sorted, each once.
fn groups(points: &[Point]) -> Vec<&str> {
    let mut groups: Vec<&str> = points.iter().map(|p| p.group.as_str()).collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// A scatter chart of labelled points as an SVG document.
pub fn scatter_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    points: &[Point],
) -> Result<String, MetricsError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(title, e))?;
        let (x0, x1) = range(points.iter().map(|p| p.x), true);
        let (y0, y1) = range(points.iter().map(|p| p.y), true);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", caption_size(title)))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1 + (x1 - x0) * 0.15, y0..y1)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        // One color per group (algorithm), so flows of the same cc share it.
        let mut groups: Vec<&str> = points.iter().map(|p| p.group.as_str()).collect();
        groups.sort_unstable();
        groups.dedup();
        let finite = points.iter().filter(|p| p.x.is_finite() && p.y.is_finite());
        chart
            .draw_series(finite.map(|p| {
                let i = groups.iter().position(|g| *g == p.group).unwrap_or(0);
                let c = color(i);
                // Unlabelled points are the cloud: smaller and lighter than labelled ones.
                let (size, fill) = if p.label.is_empty() {
                    (3, c.mix(0.45).filled())
                } else {
                    (5, c.filled())
                };
                EmptyElement::at((p.x, p.y))
                    + Circle::new((0, 0), size, fill)
                    + Text::new(p.label.clone(), (8, -6), ("sans-serif", 13).into_font())
            }))
            .map_err(|e| err(title, e))?;
        root.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// The title's font size: 18 px, smaller for a long title so that it fits the figure's width
/// (plotters centres a caption and clips what overflows; 60 characters fit at 18 px).
fn caption_size(title: &str) -> u32 {
    let chars = title.chars().count().max(1) as u32;
    if chars <= 60 {
        18
    } else {
        (18 * 60 / chars).max(11)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_ignore_nan_and_widen_flat_data() {
        assert_eq!(range([f64::NAN, 1.0, 3.0].into_iter(), false), (1.0, 3.1));
        assert_eq!(range([2.0, 2.0].into_iter(), false), (1.8, 2.2));
        assert_eq!(range([0.0].into_iter(), true), (-1.0, 1.0));
        assert_eq!(range(std::iter::empty(), true), (0.0, 1.0));
        assert_eq!(range([5.0, 10.0].into_iter(), true), (0.0, 10.5));
    }

    #[test]
    fn lines_break_at_nan() {
        let s = segments(&[
            (0.0, f64::NAN),
            (1.0, 1.0),
            (2.0, 2.0),
            (3.0, f64::NAN),
            (4.0, 4.0),
        ]);
        assert_eq!(s, vec![vec![(1.0, 1.0), (2.0, 2.0)], vec![(4.0, 4.0)]]);
    }

    #[test]
    fn error_bars_widen_the_axis_and_draw_three_strokes_each() {
        let plain = Line {
            name: "reno".into(),
            points: vec![(0.0, 10.0), (1.0, 20.0)],
            spread: Vec::new(),
        };
        let with_bars = Line {
            spread: vec![5.0, 0.0],
            ..plain_clone(&plain)
        };
        let a = line_chart("t", "x", "y", &[plain]).unwrap();
        let b = line_chart("t", "x", "y", &[with_bars]).unwrap();
        // One bar (the zero-width one is not drawn): a stroke and two caps.
        assert_eq!(
            b.matches("<polyline").count(),
            a.matches("<polyline").count() + 3
        );
        // A bar reaching past the points widens the axis to hold it.
        let tall = Line {
            name: "x".into(),
            points: vec![(0.0, 10.0)],
            spread: vec![40.0],
        };
        let c = line_chart("t", "x", "y", &[tall]).unwrap();
        // plotters puts text content on its own line: the axis reaches 10 ± 40.
        assert!(
            c.contains("\n50.0\n") && c.contains("\n-30.0\n"),
            "axis not widened"
        );
    }

    fn plain_clone(l: &Line) -> Line {
        Line {
            name: l.name.clone(),
            points: l.points.clone(),
            spread: l.spread.clone(),
        }
    }

    #[test]
    fn charts_are_svg_with_titles() {
        let svg = line_chart(
            "Throughput",
            "time (s)",
            "Mb/s",
            &[Line {
                name: "flow 1".into(),
                points: vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0)],
                spread: Vec::new(),
            }],
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Throughput") && !svg.contains("NaN"));
        let svg = scatter_chart(
            "Throughput vs delay",
            "ms",
            "Mb/s",
            &[Point {
                group: "fast".into(),
                label: "fast".into(),
                x: 1.0,
                y: 300.0,
            }],
        )
        .unwrap();
        // plotters puts text content on its own line.
        assert!(svg.contains("<circle") && svg.contains("\nfast\n"));
    }
}
