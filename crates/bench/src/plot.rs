//! Charts of a run (or of several runs side by side): throughput over
//! time, the CDF of deviations from the fair share, the latency CDF and
//! the probe's delay over time, each written as SVG and PNG with plotters.
//!
//! plotters measures and draws text with a TrueType font, which it does
//! not ship: one is looked for at `$BATON_BENCH_FONT`, then at the usual
//! Debian paths (`fonts-dejavu-core`, which `scripts/install-peers.sh`
//! installs). Without one, no chart is drawn and the caller is told why.

use crate::Error;
use crate::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One line on a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend.
    pub name: String,
    /// Points `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

/// What a chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name without extension.
    pub file: String,
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Lines.
    pub series: Vec<Series>,
}

const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
];

/// Registers a font for plotters once per process.
fn ensure_font() -> Result<(), Error> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("BATON_BENCH_FONT") {
            candidates.push(p.into());
        }
        candidates.extend(FONT_PATHS.iter().map(PathBuf::from));
        for p in candidates {
            if let Ok(bytes) = std::fs::read(&p) {
                // plotters keeps fonts for the whole process; leaking one
                // font file once is the price of its `'static` API.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return Ok(());
                }
            }
        }
        Err("no TrueType font found for the charts: install fonts-dejavu-core or set BATON_BENCH_FONT".into())
    })
    .clone()
    .map_err(Error::new)
}

const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn bounds(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let pts = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts.filter(|(x, y)| x.is_finite() && y.is_finite()) {
        if chart.log_x && x <= 0.0 {
            continue;
        }
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1) = if chart.log_x {
            (0.001, 1.0)
        } else {
            (0.0, 1.0)
        };
    }
    if y0 > y1 {
        (y0, y1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + x0.abs().max(1.0) * 0.1;
    }
    y0 = y0.min(0.0);
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    ((x0, x1), (y0, y1 * 1.05))
}

macro_rules! draw_body {
    ($root:expr, $chart:expr, $xr:expr, $yr:expr) => {{
        let mut c = ChartBuilder::on($root)
            .caption(&$chart.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d($xr, $yr)
            .map_err(|e| format!("{e:?}"))?;
        c.configure_mesh()
            .x_desc(&$chart.x_label)
            .y_desc(&$chart.y_label)
            .x_label_formatter(&|v: &f64| axis_label(*v))
            .y_label_formatter(&|v: &f64| axis_label(*v))
            .draw()
            .map_err(|e| format!("{e:?}"))?;
        for (i, s) in $chart.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!$chart.log_x || *x > 0.0))
                .collect();
            c.draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                .map_err(|e| format!("{e:?}"))?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
        }
        if $chart.series.len() > 1 || $chart.series.iter().any(|s| !s.name.is_empty()) {
            c.configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()
                .map_err(|e| format!("{e:?}"))?;
        }
    }};
}

/// Short axis labels: 1.2M, 350k, 0.25.
fn axis_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| format!("{e:?}"))?;
    let ((x0, x1), (y0, y1)) = bounds(chart);
    if chart.log_x {
        draw_body!(root, chart, (x0..x1).log_scale(), y0..y1);
    } else {
        draw_body!(root, chart, x0..x1, y0..y1);
    }
    root.present().map_err(|e| format!("{e:?}"))?;
    Ok(())
}

/// Writes `chart` as `DIR/FILE.svg` and `DIR/FILE.png`; returns the paths.
pub fn write_chart(dir: &Path, chart: &Chart) -> Result<Vec<PathBuf>, Error> {
    ensure_font()?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
    let size = (960, 560);
    let svg = dir.join(format!("{}.svg", chart.file));
    draw(&SVGBackend::new(&svg, size).into_drawing_area(), chart)
        .map_err(|e| Error::new(format!("{}: {e}", svg.display())))?;
    let png = dir.join(format!("{}.png", chart.file));
    draw(&BitMapBackend::new(&png, size).into_drawing_area(), chart)
        .map_err(|e| Error::new(format!("{}: {e}", png.display())))?;
    Ok(vec![svg, png])
}

/// The four charts of one or more reports, each report one line named by
/// its label.
pub fn charts(reports: &[(&str, &Report)]) -> Vec<Chart> {
    let one = reports.len() == 1;
    let mut throughput = Vec::new();
    for (name, r) in reports {
        let pts = |f: &dyn Fn(&crate::report::SecondReport) -> Option<f64>| -> Vec<(f64, f64)> {
            r.per_second
                .iter()
                .filter_map(|s| f(s).map(|y| (s.t + 0.5, y)))
                .collect()
        };
        let label = |what: &str| {
            if one {
                what.to_string()
            } else {
                format!("{name} {what}")
            }
        };
        throughput.push(Series {
            name: label("responses/s"),
            points: pts(&|s| Some(s.responses_per_sec)),
        });
        if one {
            throughput.push(Series {
                name: label("requests/s"),
                points: pts(&|s| Some(s.requests_per_sec)),
            });
            if r.per_second.iter().any(|s| s.offered_per_sec.is_some()) {
                throughput.push(Series {
                    name: label("offered/s"),
                    points: pts(&|s| s.offered_per_sec),
                });
            }
        }
    }
    let series = |f: &dyn Fn(&Report) -> Vec<(f64, f64)>| -> Vec<Series> {
        reports
            .iter()
            .map(|(name, r)| Series {
                name: if one { String::new() } else { name.to_string() },
                points: f(r),
            })
            .collect()
    };
    let mut out = vec![
        Chart {
            file: "throughput".into(),
            title: "Throughput over time".into(),
            x_label: "seconds after warm-up".into(),
            y_label: "per second".into(),
            log_x: false,
            series: throughput,
        },
        Chart {
            file: "fairness_cdf".into(),
            title: "Deviation from the max-min fair share".into(),
            x_label: "deviation (%)".into(),
            y_label: "fraction of switches".into(),
            log_x: false,
            series: series(&|r| {
                step(
                    &r.deviation_cdf
                        .iter()
                        .map(|(d, f)| (d * 100.0, *f))
                        .collect::<Vec<_>>(),
                )
            }),
        },
        Chart {
            file: "latency_cdf".into(),
            title: "Request latency".into(),
            x_label: "latency (ms)".into(),
            y_label: "fraction of requests".into(),
            log_x: true,
            series: series(&|r| r.latency_cdf.clone()),
        },
    ];
    if reports.iter().any(|(_, r)| !r.probe_samples.is_empty()) {
        out.push(Chart {
            file: "probe_delay".into(),
            title: "Probe switch delay (5 requests/s)".into(),
            x_label: "seconds after warm-up".into(),
            y_label: "delay (ms)".into(),
            log_x: false,
            series: series(&|r| r.probe_samples.clone()),
        });
    }
    out
}

/// Turns CDF points into a step line.
fn step(cdf: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(cdf.len() * 2 + 1);
    let mut prev = 0.0;
    for &(x, f) in cdf {
        out.push((x, prev));
        out.push((x, f));
        prev = f;
    }
    out
}

/// Writes the charts of `reports` into `dir`; returns the files.
pub fn write_all(dir: &Path, reports: &[(&str, &Report)]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for c in charts(reports) {
        files.extend(write_chart(dir, &c)?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_and_bounds() {
        assert_eq!(
            step(&[(1.0, 0.5), (2.0, 1.0)]),
            vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.5), (2.0, 1.0)]
        );
        let c = Chart {
            file: "x".into(),
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 1.0), (0.5, 2.0), (4.0, 3.0)],
            }],
        };
        let ((x0, x1), (y0, _)) = bounds(&c);
        assert_eq!((x0, x1, y0), (0.5, 4.0, 0.0));
    }

    #[test]
    fn writes_svg_and_png_when_a_font_exists() {
        if ensure_font().is_err() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("baton-bench-plot-{}", std::process::id()));
        let c = Chart {
            file: "demo".into(),
            title: "demo".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.1, 0.0), (1.0, 0.5), (10.0, 1.0)],
            }],
        };
        let files = write_chart(&dir, &c).unwrap();
        for f in &files {
            assert!(std::fs::metadata(f).unwrap().len() > 100, "{}", f.display());
        }
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("<svg"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
