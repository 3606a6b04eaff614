//! SVG plots drawn with plotters' SVG backend and its built-in text metrics (no system fonts).
//!
//! Lines break at NaN (a flow that has not started has no throughput to draw, which is not the
//! same as zero), axis ranges ignore NaN, and a degenerate range (all values equal) is widened so
//! the plot still has an axis. Legends sit in a column right of the data, so ten flows' names
//! never cover their lines. Tick labels print the value at their position with up to twelve
//! significant digits (0.00009, not a rounded 0.0001); a log10 x axis labels its whole decades
//! and the position it draws 0 at.

use crate::error::MetricsError;
use plotters::prelude::*;

/// One named line: (x, y) points in order.
pub struct Line {
    /// The name in the legend.
    pub name: String,
    /// The (x, y) points; a NaN y breaks the line.
    pub points: Vec<(f64, f64)>,
    /// Error bars: the half-width at each point (same length as `points`), drawn as y ± e;
    /// empty for none. A sweep's report draws one standard deviation over seeds.
    pub spread: Vec<f64>,
}

/// One labelled point of a scatter plot; points of the same group share a color. An empty label
/// draws the point alone (a cloud of runs around a labelled mean).
pub struct Point {
    /// The group, which chooses the color.
    pub group: String,
    /// Text drawn beside the point; empty draws it small and alone.
    pub label: String,
    /// The x value.
    pub x: f64,
    /// The y value.
    pub y: f64,
}

/// Events drawn as glyphs over a line chart (a flow's losses on its cwnd line), in the color of
/// the line `line` (an index into the chart's lines).
pub struct Marks {
    /// The name in the legend.
    pub name: String,
    /// Index of the line whose color the glyphs take.
    pub line: usize,
    /// The glyph drawn at each point.
    pub glyph: Glyph,
    /// The (x, y) position of each event.
    pub points: Vec<(f64, f64)>,
}

/// A point glyph; the trade-off plot gives each controller its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Glyph {
    /// A circle.
    Circle,
    /// A triangle.
    Triangle,
    /// A square.
    Square,
    /// An ×-shaped cross.
    Cross,
    /// A diamond.
    Diamond,
}

impl Glyph {
    /// Every glyph, in the order they are handed out.
    pub const ALL: [Glyph; 5] = [
        Glyph::Circle,
        Glyph::Triangle,
        Glyph::Square,
        Glyph::Cross,
        Glyph::Diamond,
    ];
}

/// How one line is drawn: its color (an index for `color`) and a glyph at each of its points,
/// which tells apart lines that share a color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineStyle {
    /// An index for `color`.
    pub color: usize,
    /// The glyph drawn at each point, if any.
    pub glyph: Option<Glyph>,
}

/// The x axis of a line chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XAxis {
    /// Values drawn as they are.
    Linear,
    /// log10 of the values; a value of 0 (which has no logarithm) is drawn at x = `zero`, and
    /// that tick is labelled 0.
    Log {
        /// The position that values of 0 and below are drawn at (in log10 units).
        zero: f64,
    },
}

impl XAxis {
    /// Where value `v` is drawn.
    pub fn position(&self, v: f64) -> f64 {
        match *self {
            XAxis::Log { zero } if v <= 0.0 => zero,
            XAxis::Log { .. } => v.log10(),
            XAxis::Linear => v,
        }
    }

    /// The label of the tick at position `x`: the value there; on a log axis only whole decades
    /// and the zero position are labelled (a tick between them would read 10^-5.5).
    fn label(&self, x: f64) -> String {
        match *self {
            XAxis::Linear => tick_label(x),
            XAxis::Log { zero } if (x - zero).abs() < 1e-9 => "0".to_string(),
            XAxis::Log { .. } if (x - x.round()).abs() < 1e-9 => decade_label(x.round() as i32),
            XAxis::Log { .. } => String::new(),
        }
    }
}

/// Options of a line chart beyond its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartOptions {
    /// One per line; a line without one gets color i (its index) and no glyph.
    pub styles: Vec<LineStyle>,
    /// How the x values are placed.
    pub x_axis: XAxis,
    /// The values the y quantity can physically take (a delay, a rate or a loss rate is never
    /// negative; a loss rate or utilization never exceeds 100 %): error bars stop there.
    pub y_bounds: (f64, f64),
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            styles: Vec::new(),
            x_axis: XAxis::Linear,
            y_bounds: (f64::NEG_INFINITY, f64::INFINITY),
        }
    }
}

/// A tick label: the value with up to twelve significant digits (which removes the binary
/// noise of 0.1 + 0.2), in exponent form below 0.001 and from 10^7 on.
pub fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let r: f64 = format!("{v:.11e}").parse().unwrap_or(v);
    if r == 0.0 {
        "0".to_string()
    } else if r.abs() < 1e-3 || r.abs() >= 1e7 {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// 10^k as a tick label: 0.001 … 1000 written out, 1e-5 and 1e4 beyond.
fn decade_label(k: i32) -> String {
    if (-3..=3).contains(&k) {
        format!("{}", 10f64.powi(k))
    } else {
        format!("1e{k}")
    }
}

/// An error bar's ends: y ± e within the quantity's bounds.
fn bar_ends(y: f64, e: f64, (lo, hi): (f64, f64)) -> (f64, f64) {
    ((y - e).max(lo), (y + e).min(hi))
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

/// Width of every chart, in SVG pixels.
pub const WIDTH: u32 = 860;
/// Height of every chart, in SVG pixels.
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
    Line(RGBColor, Option<Glyph>),
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
            Key::Line(c, glyph) => {
                area.draw(&PathElement::new(vec![(6, y), (26, y)], c.stroke_width(2)))
                    .map_err(|e| err(title, e))?;
                if let Some(g) = glyph {
                    legend_glyph(area, *g, *c, y, title)?;
                }
            }
            Key::Glyph(g, c) => legend_glyph(area, *g, *c, y, title)?,
        }
        area.draw(&Text::new(name.clone(), (32, y - 7), font.clone()))
            .map_err(|e| err(title, e))?;
    }
    Ok(())
}

/// A legend row's glyph, centred on its line sample.
fn legend_glyph(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    g: Glyph,
    c: RGBColor,
    y: i32,
    title: &str,
) -> Result<(), MetricsError> {
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
    .map_err(|e| err(title, e))
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
    chart_with_marks(
        title,
        x_desc,
        y_desc,
        lines,
        marks,
        &ChartOptions::default(),
    )
}

/// A line chart with styled lines, a chosen x axis and bounded error bars. The lines' x values
/// are data values: a log axis places them.
pub fn line_chart_with(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    options: &ChartOptions,
) -> Result<String, MetricsError> {
    let placed: Vec<Line> = lines
        .iter()
        .map(|l| Line {
            name: l.name.clone(),
            points: l
                .points
                .iter()
                .map(|&(x, y)| (options.x_axis.position(x), y))
                .collect(),
            spread: l.spread.clone(),
        })
        .collect();
    chart_with_marks(title, x_desc, y_desc, &placed, &[], options)
}

/// A line chart with event glyphs and options; the lines' x values are positions (`XAxis::
/// position` of the data values).
pub fn chart_with_marks(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    marks: &[Marks],
    options: &ChartOptions,
) -> Result<String, MetricsError> {
    let style = |i: usize| {
        options.styles.get(i).copied().unwrap_or(LineStyle {
            color: i,
            glyph: None,
        })
    };
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
                    let (lo, hi) = bar_ends(p.1, e, options.y_bounds);
                    [lo, hi]
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
        let x_axis = options.x_axis;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| x_axis.label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        let mut keys = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let LineStyle { color: ci, glyph } = style(i);
            let c = color(ci);
            for seg in segments(&line.points) {
                chart
                    .draw_series(LineSeries::new(seg.clone(), c.stroke_width(2)))
                    .map_err(|e| err(title, e))?;
                if let Some(g) = glyph {
                    draw_glyphs(&mut chart, g, seg, 4, c.filled(), title)?;
                }
            }
            keys.push((line.name.clone(), Key::Line(c, glyph)));
            // Error bars: a vertical stroke with short caps, in the line's color, cut at the
            // quantity's bounds (no cap where cut).
            let caps = (x1 - x0) * 0.006;
            for (&(x, y), &e) in line.points.iter().zip(&line.spread) {
                if !(x.is_finite() && y.is_finite() && e.is_finite() && e > 0.0) {
                    continue;
                }
                let (lo, hi) = bar_ends(y, e, options.y_bounds);
                let mut bar = vec![vec![(x, lo), (x, hi)]];
                if lo == y - e {
                    bar.push(vec![(x - caps, lo), (x + caps, lo)]);
                }
                if hi == y + e {
                    bar.push(vec![(x - caps, hi), (x + caps, hi)]);
                }
                chart
                    .draw_series(
                        bar.into_iter()
                            .map(|p| PathElement::new(p, c.stroke_width(1))),
                    )
                    .map_err(|e| err(title, e))?;
            }
        }
        for m in marks {
            let c = color(style(m.line).color);
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

/// One entry of a trade-off plot (a flow): small pale glyphs (its time windows) and large solid
/// ones (its whole run), in one color and glyph, named once in the legend.
pub struct Cloud {
    /// The name in the legend.
    pub name: String,
    /// An index for `color`.
    pub color: usize,
    /// The glyph of its points.
    pub glyph: Glyph,
    /// Points of its time windows, (x, y), drawn small and pale.
    pub small: Vec<(f64, f64)>,
    /// Points of its whole run, (x, y), drawn large and solid.
    pub large: Vec<(f64, f64)>,
}

/// Throughput against delay in Pantheon's style: one legend entry per cloud, the delay axis
/// inverted so that better (less delay, more throughput) is up and to the right.
pub fn tradeoff_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    clouds: &[Cloud],
) -> Result<String, MetricsError> {
    let all = || clouds.iter().flat_map(|c| c.small.iter().chain(&c.large));
    let mut svg = String::new();
    {
        let whole = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        whole.fill(&WHITE).map_err(|e| err(title, e))?;
        let (root, side) = whole.split_horizontally(WIDTH - LEGEND_W);
        let (x0, x1) = range(all().map(|p| p.0), true);
        let (y0, y1) = range(all().map(|p| p.1), true);
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
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        let finite = |v: &[(f64, f64)]| -> Vec<(f64, f64)> {
            v.iter()
                .copied()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect()
        };
        let mut keys = Vec::new();
        for cloud in clouds {
            let c = color(cloud.color);
            let pale = c.mix(0.55).filled();
            draw_glyphs(
                &mut chart,
                cloud.glyph,
                finite(&cloud.small),
                3,
                pale,
                title,
            )?;
            draw_glyphs(
                &mut chart,
                cloud.glyph,
                finite(&cloud.large),
                6,
                c.filled(),
                title,
            )?;
            keys.push((cloud.name.clone(), Key::Glyph(cloud.glyph, c)));
        }
        legend(&side, &keys, title)?;
        whole.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// A stable color per name (a controller): the name's place among the sorted distinct names,
/// so that every figure built from the same names colors a name alike.
pub struct ColorKey(Vec<String>);

impl ColorKey {
    /// A key over the distinct `names`, in sorted order.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> ColorKey {
        let mut v: Vec<String> = names.into_iter().map(str::to_string).collect();
        v.sort_unstable();
        v.dedup();
        ColorKey(v)
    }

    /// The color index of `name` (0 for a name not in the key).
    pub fn index(&self, name: &str) -> usize {
        self.0.iter().position(|n| n == name).unwrap_or(0)
    }
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
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| tick_label(*y))
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        // One color per group (algorithm), so flows of the same cc share it.
        let groups = ColorKey::new(points.iter().map(|p| p.group.as_str()));
        let finite = points.iter().filter(|p| p.x.is_finite() && p.y.is_finite());
        chart
            .draw_series(finite.map(|p| {
                let c = color(groups.index(&p.group));
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
            c.contains("\n50\n") && c.contains("\n-30\n"),
            "axis not widened"
        );
    }

    #[test]
    fn tick_labels_are_the_values_at_their_positions() {
        assert_eq!(tick_label(0.00009), "9e-5");
        assert_eq!(tick_label(9.0 * 1e-5 * (1.0 + f64::EPSILON)), "9e-5");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(250.0), "250");
        assert_eq!(tick_label(-30.0), "-30");
        // A chart over 0 … 1e-4 labels its ticks with their own values.
        let loss = Line {
            name: "reno".into(),
            points: vec![(0.0, 1.0), (1e-5, 2.0), (1e-4, 3.0)],
            spread: Vec::new(),
        };
        let svg = line_chart("t", "x", "y", &[loss]).unwrap();
        assert!(
            svg.contains("\n9e-5\n") && svg.contains("\n1e-4\n"),
            "{svg}"
        );
    }

    #[test]
    fn log_axis_places_decades_and_zero() {
        let axis = XAxis::Log { zero: -6.0 };
        assert_eq!(axis.position(0.0), -6.0);
        assert_eq!(axis.position(1e-4), -4.0);
        assert_eq!(axis.label(-6.0), "0");
        assert_eq!(axis.label(-5.0), "1e-5");
        assert_eq!(axis.label(-3.0), "0.001");
        assert_eq!(axis.label(-4.5), "");
        let loss = Line {
            name: "reno".into(),
            points: vec![(0.0, 1.0), (1e-5, 2.0), (1e-4, 3.0)],
            spread: Vec::new(),
        };
        let options = ChartOptions {
            x_axis: axis,
            ..ChartOptions::default()
        };
        let svg = line_chart_with("t", "x", "y", &[loss], &options).unwrap();
        // The x axis's ticks (below the plotting area): 0, 1e-5 and 1e-4, left to right,
        // evenly spaced; no position (-5) printed as a label.
        let lines: Vec<&str> = svg.lines().collect();
        let attr = |tag: &str, a: &str| -> i32 {
            let v = tag.split(&format!(" {a}=\"")).nth(1).unwrap();
            v.split('"').next().unwrap().parse().unwrap()
        };
        let x_ticks: Vec<(i32, &str)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("<text") && !l.contains("rotate"))
            .filter(|(_, l)| (290..320).contains(&attr(l, "y")))
            .map(|(i, l)| (attr(l, "x"), lines[i + 1]))
            .collect();
        let at = |label: &str| x_ticks.iter().find(|t| t.1 == label).expect(label).0;
        let (z, a, b) = (at("0"), at("1e-5"), at("1e-4"));
        assert!(
            z < a && a < b && ((a - z) - (b - a)).abs() <= 1,
            "{x_ticks:?}"
        );
        assert!(x_ticks.iter().all(|t| !t.1.starts_with('-')), "{x_ticks:?}");
    }

    #[test]
    fn error_bars_stop_at_the_bounds() {
        assert_eq!(bar_ends(5.0, 20.0, (0.0, f64::INFINITY)), (0.0, 25.0));
        assert_eq!(bar_ends(90.0, 20.0, (0.0, 100.0)), (70.0, 100.0));
        let delay = Line {
            name: "reno".into(),
            points: vec![(0.0, 5.0), (1.0, 30.0)],
            spread: vec![25.0, 1.0],
        };
        let options = ChartOptions {
            y_bounds: (0.0, f64::INFINITY),
            ..ChartOptions::default()
        };
        let svg = line_chart_with("t", "x", "ms", &[plain_clone(&delay)], &options).unwrap();
        // The axis starts at 0, not at 5 − 25; the cut bar has no lower cap.
        assert!(
            !svg.contains("\n-20\n") && !svg.contains("\n-10\n"),
            "{svg}"
        );
        let c = color(0);
        let stroke = format!(
            "stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"1\"",
            c.0, c.1, c.2
        );
        let bar_strokes = |svg: &str| svg.matches(&stroke).count();
        let unbounded = line_chart("t", "x", "ms", &[delay]).unwrap();
        assert!(unbounded.contains("\n-10\n"));
        assert_eq!((bar_strokes(&unbounded), bar_strokes(&svg)), (6, 5));
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
