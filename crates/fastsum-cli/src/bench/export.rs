//! The report: Perl's `cmpthese` table and JSON, pure functions of the
//! measurements.

use std::fmt::Write as _;
use std::time::Duration;

use fastsum::Algorithm;

use super::timer::Measurement;

/// What was measured: the input and each strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Files hashed per iteration.
    pub files: u64,
    /// Bytes hashed per iteration.
    pub bytes: u64,
    /// Each strategy's measurement.
    pub measurements: Vec<Measurement>,
}

impl Report {
    /// The measurements sorted slowest first (by median).
    pub fn slowest_first(&self) -> Vec<&Measurement> {
        let mut rows: Vec<&Measurement> = self.measurements.iter().collect();
        rows.sort_by(|a, b| b.median().cmp(&a.median()).then(a.name.cmp(&b.name)));
        rows
    }

    fn rate(&self, m: &Measurement) -> f64 {
        let seconds = m.median().as_secs_f64();
        if seconds == 0.0 {
            return f64::INFINITY;
        }
        self.bytes as f64 / 1e6 / seconds
    }
}

/// Perl's rate formatting: fewer decimals as the number grows.
fn format_rate(rate: f64) -> String {
    if rate >= 100.0 {
        format!("{rate:.0}")
    } else if rate >= 10.0 {
        format!("{rate:.1}")
    } else if rate >= 1.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.3}")
    }
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// The cmpthese table: rows and columns slowest to fastest, a `Rate` column
/// (MB/s, and files/s when more than one file), the percentage matrix
/// (`--` on the diagonal; cell = row rate / column rate - 1), then median,
/// spread and peak RSS per strategy; every column right-aligned and joined
/// by one space, as Perl prints it. Ends with a recommendation line.
pub fn render_table(report: &Report) -> String {
    let rows = report.slowest_first();
    let many_files = report.files > 1;
    let mut header = vec![String::new(), "Rate".to_string()];
    if many_files {
        header.push("Files".into());
    }
    header.extend(rows.iter().map(|m| m.name.clone()));
    header.extend(["median".into(), "spread".into(), "peak RSS".into()]);
    let mut table = vec![header];
    for row in &rows {
        let rate = report.rate(row);
        let mut cells = vec![row.name.clone(), format!("{} MB/s", format_rate(rate))];
        if many_files {
            let per_second = report.files as f64 / row.median().as_secs_f64();
            cells.push(format!("{}/s", format_rate(per_second)));
        }
        for column in &rows {
            cells.push(if std::ptr::eq(*row, *column) {
                "--".into()
            } else {
                format!("{:.0}%", 100.0 * (rate / report.rate(column) - 1.0))
            });
        }
        cells.push(format_duration(row.median()));
        cells.push(format!("±{:.0}%", row.spread_percent()));
        cells.push(match row.peak_rss {
            Some(bytes) => format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0)),
            None => "-".into(),
        });
        table.push(cells);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:>w$}"))
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    if let Some(fastest) = rows.last() {
        let _ = write!(
            out,
            "\nFastest: {} ({} MB/s",
            fastest.name,
            format_rate(report.rate(fastest))
        );
        if let Some(slowest) = rows.first().filter(|s| s.name != fastest.name) {
            let _ = write!(
                out,
                ", {:.1}x {}",
                report.rate(fastest) / report.rate(slowest),
                slowest.name
            );
        }
        out.push(')');
        let frugal = rows
            .iter()
            .filter_map(|m| m.peak_rss.map(|rss| (rss, m)))
            .min_by_key(|(rss, _)| *rss);
        if let (Some((rss, m)), Some(fastest_rss)) = (frugal, fastest.peak_rss) {
            if m.name != fastest.name {
                let _ = write!(
                    out,
                    "; least memory: {} ({:.1} MiB vs {:.1} MiB)",
                    m.name,
                    rss as f64 / 1048576.0,
                    fastest_rss as f64 / 1048576.0
                );
            }
        }
        out.push_str(".\n");
    }
    out
}

/// The same figures as JSON, for programs.
pub fn render_json(report: &Report) -> String {
    let mut out = format!(
        "{{\"schema\":{},\"algorithm\":\"{}\",\"files\":{},\"bytes\":{},\"strategies\":[",
        fastsum::manifest::json::SCHEMA_VERSION,
        report.algorithm,
        report.files,
        report.bytes
    );
    for (i, m) in report.slowest_first().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let times: Vec<String> = m
            .times
            .iter()
            .map(|t| format!("{:.9}", t.as_secs_f64()))
            .collect();
        let _ = write!(
            out,
            "{{\"name\":{},\"median_seconds\":{:.9},\"mb_per_second\":{:.3},\"spread_percent\":{:.3},\"peak_rss_bytes\":{},\"times_seconds\":[{}]}}",
            json_string(&m.name),
            m.median().as_secs_f64(),
            report.rate(m),
            m.spread_percent(),
            m.peak_rss.map_or("null".to_string(), |r| r.to_string()),
            times.join(",")
        );
    }
    out.push_str("]}\n");
    out
}

/// `text` as a JSON string, quotes included: `"` and `\` escaped, and
/// every control character (a strategy's name comes from the command line
/// and may hold any of them) as `\uXXXX`, as RFC 8259 requires.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
