//! `--png`: each exported SVG figure also as a PNG, rasterized by resvg with the system's
//! fonts (the SVGs name the generic "sans-serif" family).

use anyhow::{anyhow, bail, Context, Result};
use resvg::{tiny_skia, usvg};
use std::path::{Path, PathBuf};

/// Rasterize `svg` at `scale` × its size.
pub fn svg_to_png(svg: &str, fonts: &usvg::fontdb::Database, scale: f32) -> Result<Vec<u8>> {
    let options = usvg::Options {
        fontdb: std::sync::Arc::new(fonts.clone()),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).context("parsing the SVG figure")?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| anyhow!("empty figure"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow!("figure too large to rasterize"))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
}

/// Sans-serif families tried for the figures' generic "sans-serif", in order: fontdb maps the
/// generic name to Arial, which Linux systems rarely have, and text in a family it cannot find
/// is silently left out.
const SANS_FAMILIES: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "FreeSans",
    "Arial",
    "Helvetica",
];

/// The system's fonts with "sans-serif" mapped to one that is installed; an error saying what
/// to install when there is none.
pub fn system_fonts() -> Result<usvg::fontdb::Database> {
    let mut db = usvg::fontdb::Database::new();
    db.load_system_fonts();
    let installed = |name: &str| {
        db.faces()
            .any(|f| f.families.iter().any(|(family, _)| family == name))
    };
    let Some(sans) = SANS_FAMILIES.iter().copied().find(|n| installed(n)) else {
        bail!(
            "--png: none of the sans-serif fonts {} is installed to draw the figures' text; \
             install one (e.g. the Debian package fonts-dejavu-core) or use the SVG figures",
            SANS_FAMILIES.join(", ")
        );
    };
    db.set_sans_serif_family(sans);
    Ok(db)
}

/// Write `NAME.png` (at twice the SVG's size, for print) beside every `NAME.svg` in `dir`.
pub fn convert_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let fonts = system_fonts()?;
    let mut written = Vec::new();
    let mut svgs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    svgs.sort();
    for svg in svgs {
        let text =
            std::fs::read_to_string(&svg).with_context(|| format!("reading {}", svg.display()))?;
        let png = svg.with_extension("png");
        let bytes = svg_to_png(&text, &fonts, 2.0).with_context(|| svg.display().to_string())?;
        longhaul_output::write(&png, &bytes)?;
        written.push(png);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_metrics::example::example_summary;
    use longhaul_metrics::report::figures::figures;
    use longhaul_metrics::report::plot::color;

    /// Dark pixels of `svg` rasterized.
    fn dark_pixels(svg: &str, fonts: &usvg::fontdb::Database) -> usize {
        let png = svg_to_png(svg, fonts, 1.0).unwrap();
        let img = tiny_skia::Pixmap::decode_png(&png).unwrap();
        img.pixels()
            .iter()
            .filter(|p| p.alpha() > 128 && p.red() < 100 && p.green() < 100 && p.blue() < 100)
            .count()
    }

    #[test]
    fn labels_are_drawn_in_the_generic_sans_serif_family() {
        // Fonts are part of the machine's setup (scripts/packages.txt): a missing one fails.
        let fonts = system_fonts().expect("a sans-serif font (scripts/setup.sh installs one)");
        let text = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40">
            <text x="10" y="30" font-family="sans-serif" font-size="24">Mb/s 123</text></svg>"#;
        let drawn = dark_pixels(text, &fonts);
        assert!(drawn > 150, "the label drew {drawn} dark pixels");
        // The figures name the same family for every label.
        let s = example_summary();
        let figs = figures(&[("", &s)]).unwrap();
        let svg = figs[0].svg.as_ref().unwrap();
        assert!(
            svg.contains("sans-serif"),
            "the figures' font family changed"
        );
        // Without a usable mapping (fontdb's default, Arial) nothing would be drawn.
        let mut unmapped = fonts.clone();
        unmapped.set_sans_serif_family("No Such Family");
        assert_eq!(dark_pixels(text, &unmapped), 0);
    }

    #[test]
    fn figures_rasterize_with_their_lines_and_text() {
        let Ok(fonts) = system_fonts() else {
            eprintln!("skipped: no system fonts");
            return;
        };
        let s = example_summary();
        let figs = figures(&[("", &s)]).unwrap();
        let svg = figs
            .iter()
            .find(|f| f.slug == "throughput")
            .unwrap()
            .svg
            .clone()
            .unwrap();
        let png = svg_to_png(&svg, &fonts, 2.0).unwrap();
        let img = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((img.width(), img.height()), (2 * 860, 2 * 340));
        // Each flow's line is drawn in its color, and the text in black.
        let count = |c: (u8, u8, u8)| {
            img.pixels()
                .iter()
                .filter(|p| (p.red(), p.green(), p.blue(), p.alpha()) == (c.0, c.1, c.2, 255))
                .count()
        };
        for i in 0..s.flows.len() {
            let c = color(i);
            assert!(count((c.0, c.1, c.2)) > 500, "flow {i}'s line is missing");
        }
        assert!(count((0, 0, 0)) > 2000, "no text or axes");
    }
}
