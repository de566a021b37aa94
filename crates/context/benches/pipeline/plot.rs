//! The bench's plot: for each session, context tokens per request (top) and the billed cost
//! of each request (bottom), cairn in blue and the baseline in grey.

use std::fmt::Write as _;

use super::meter::Meter;
use super::script::Script;

const WIDTH: f64 = 1100.0;
const PANEL: f64 = 170.0;
const MARGIN: f64 = 60.0;

pub fn svg(sessions: &[(Script, Meter, Meter)]) -> String {
    let height = MARGIN + sessions.len() as f64 * (2.0 * PANEL + MARGIN);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r##"<text x="{MARGIN}" y="28" font-size="15">Context and billed input per request: <tspan fill="#1565c0">cairn</tspan> and <tspan fill="#888">grow-then-summarise baseline</tspan></text>"##
    );
    for (index, (script, cairn, baseline)) in sessions.iter().enumerate() {
        let top = MARGIN + index as f64 * (2.0 * PANEL + MARGIN);
        let ratio = cairn.billed() / baseline.billed();
        let _ = writeln!(
            svg,
            r#"<text x="{MARGIN}" y="{:.1}" font-size="13">{}: {:.2}x the baseline's billed input</text>"#,
            top + 8.0,
            script.name,
            ratio
        );
        let context = |meter: &Meter| -> Vec<f64> {
            meter
                .requests
                .iter()
                .map(|billed| billed.context as f64)
                .collect()
        };
        let cost = |meter: &Meter| -> Vec<f64> {
            meter.requests.iter().map(|billed| billed.cost()).collect()
        };
        panel(
            &mut svg,
            top + 16.0,
            "context tokens",
            script.window as f64,
            &[(context(baseline), "#888"), (context(cairn), "#1565c0")],
        );
        let highest = cost(baseline)
            .into_iter()
            .chain(cost(cairn))
            .fold(1.0, f64::max);
        panel(
            &mut svg,
            top + 16.0 + PANEL,
            "billed input",
            highest,
            &[(cost(baseline), "#888"), (cost(cairn), "#1565c0")],
        );
    }
    let _ = writeln!(svg, "</svg>");
    svg
}

fn panel(svg: &mut String, top: f64, label: &str, highest: f64, lines: &[(Vec<f64>, &str)]) {
    let bottom = top + PANEL - 24.0;
    let longest = lines
        .iter()
        .map(|(values, _)| values.len())
        .max()
        .unwrap_or(2)
        .max(2);
    let x = |index: usize| MARGIN + index as f64 / (longest - 1) as f64 * (WIDTH - 2.0 * MARGIN);
    let y = |value: f64| bottom - value / highest * (bottom - top);
    let _ = writeln!(
        svg,
        r##"<line x1="{MARGIN}" x2="{:.1}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="#444"/><line x1="{MARGIN}" x2="{:.1}" y1="{top:.1}" y2="{top:.1}" stroke="#ccc" stroke-dasharray="4 3"/>"##,
        WIDTH - MARGIN,
        WIDTH - MARGIN
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.0}K</text><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#,
        MARGIN - 6.0,
        top + 4.0,
        highest / 1_000.0,
        MARGIN - 6.0,
        bottom
    );
    for (values, colour) in lines {
        let points: String = values
            .iter()
            .enumerate()
            .map(|(index, &value)| format!("{:.1},{:.1} ", x(index), y(value)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.2"/>"#
        );
    }
}
