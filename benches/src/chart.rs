//! The SVG chart: latency per workload per engine for the headline
//! scenario (the one the goals are judged on), on a log scale.

use std::path::Path;

use plotters::prelude::*;

use crate::engines::EngineKind;
use crate::error::{BenchError, Result};
use crate::report::{goal_scenario, value};
use crate::results::RunResults;
use crate::workloads::{Unit, Workload};

const SIZE: (u32, u32) = (1280, 640);

/// Writes the chart to `path` (an empty chart if there is nothing to show).
pub fn write_svg(path: &Path, r: &RunResults) -> Result<()> {
    let Some(scenario) = goal_scenario(r).or_else(|| r.settings.scenarios.first().copied()) else {
        return Err("no scenario to chart".into());
    };
    let workloads: Vec<Workload> = Workload::ALL
        .into_iter()
        .filter(|w| w.is_latency() && r.settings.workloads.contains(w))
        .collect();
    let engines: Vec<EngineKind> = r
        .settings
        .engines
        .iter()
        .copied()
        .filter(|&e| {
            r.rows
                .iter()
                .any(|x| x.engine == e && x.scenario == scenario)
        })
        .collect();
    let bars = |e: EngineKind| -> Vec<(usize, f64)> {
        workloads
            .iter()
            .enumerate()
            .filter_map(|(i, &w)| r.row(&scenario, e, w).map(|x| (i, x.summary.median)))
            .collect()
    };
    let values: Vec<f64> = engines
        .iter()
        .flat_map(|&e| bars(e))
        .map(|(_, v)| v)
        .collect();
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(1.0)
        / 2.0;
    // Headroom above the tallest bar keeps the legend clear of the bars.
    let hi = values.iter().copied().fold(0.0, f64::max).max(lo * 4.0) * 8.0;

    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let caption = format!(
        "Latency per workload, median ({}); lower is better",
        scenario.label()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..workloads.len() as f64, (lo..hi).log_scale())
        .map_err(err)?;
    let names: Vec<&str> = workloads.iter().map(|w| w.name()).collect();
    let label = |x: &f64| label_at(*x, &names);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(workloads.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|v: &f64| value(*v, Unit::NanosPerOp))
        .y_desc("time per operation / key loaded / entry scanned (log scale)")
        .draw()
        .map_err(err)?;
    let width = 0.8 / engines.len().max(1) as f64;
    for (j, &engine) in engines.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let rects = bars(engine).into_iter().map(move |(i, v)| {
            let x0 = i as f64 + 0.1 + j as f64 * width;
            Rectangle::new([(x0, lo), (x0 + width * 0.9, v)], color.filled())
        });
        chart
            .draw_series(rects)
            .map_err(err)?
            .label(engine.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// The workload name at the middle of each group, nothing elsewhere.
fn label_at(x: f64, names: &[&str]) -> String {
    let i = x.floor();
    if (x - i - 0.5).abs() < 1e-6 && i >= 0.0 {
        names
            .get(i as usize)
            .map_or(String::new(), |n| n.to_string())
    } else {
        String::new()
    }
}

fn err(e: impl std::fmt::Display) -> BenchError {
    BenchError(format!("chart: {e}"))
}
