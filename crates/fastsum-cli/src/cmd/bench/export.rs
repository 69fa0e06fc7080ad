//! The report: Perl's `cmpthese` table and JSON, pure functions of the
//! measurements.

use std::fmt::Write as _;
use std::time::Duration;

use fastsum::Algorithm;

use super::timer::Measurement;
use crate::term::json_string;

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
/// (`--` on the diagonal; cell = how much faster the row is than the
/// column, from the medians, so an empty file gives 0%, never NaN), then
/// median, spread and peak RSS per strategy; every column right-aligned
/// and joined by one space, as Perl prints it. Ends with a recommendation.
///
/// With `max_width` (a terminal's), a table wider than that drops the
/// matrix for one `vs fastest` column, so it fits in 100 columns.
pub fn render_table(report: &Report, max_width: Option<usize>) -> String {
    let full = table_lines(report, false);
    let too_wide = max_width.is_some_and(|w| full.iter().any(|l| l.chars().count() > w));
    let lines = if too_wide {
        table_lines(report, true)
    } else {
        full
    };
    let mut out = lines.join("\n") + "\n";
    let words = recommendation(report);
    match max_width {
        Some(width) => {
            for line in words.lines() {
                out.push_str(&wrap(line, width.max(40)));
            }
        }
        None => out.push_str(&words),
    }
    out
}

/// `line` broken at spaces into lines of at most `width` characters (a
/// word longer than that stands alone), each ending in a newline.
fn wrap(line: &str, width: usize) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for word in line.split(' ') {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&current);
            out.push('\n');
            current.clear();
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    out.push_str(&current);
    out.push('\n');
    out
}

/// How much faster `row` is than `column`, in percent, from the medians.
fn faster_by(row: &Measurement, column: &Measurement) -> f64 {
    let (r, c) = (row.median().as_secs_f64(), column.median().as_secs_f64());
    if r == 0.0 || c == 0.0 {
        return 0.0;
    }
    100.0 * (c / r - 1.0)
}

/// A percentage as the table shows it: whole, and never "-0%".
fn percent(value: f64) -> String {
    let rounded = value.round();
    format!("{}%", if rounded == 0.0 { 0.0 } else { rounded })
}

/// The table's lines; `compact`: no percentage matrix, a `vs fastest`
/// column instead.
fn table_lines(report: &Report, compact: bool) -> Vec<String> {
    let rows = report.slowest_first();
    let many_files = report.files > 1;
    let mut header = vec![String::new(), "Rate".to_string()];
    if many_files {
        header.push("Files".into());
    }
    if compact {
        header.push("vs fastest".into());
    } else {
        header.extend(rows.iter().map(|m| m.name.clone()));
    }
    header.extend(["median".into(), "spread".into(), "peak RSS".into()]);
    let mut table = vec![header];
    for row in &rows {
        let rate = report.rate(row);
        let mut cells = vec![row.name.clone(), format!("{} MB/s", format_rate(rate))];
        if many_files {
            let per_second = report.files as f64 / row.median().as_secs_f64();
            cells.push(format!("{}/s", format_rate(per_second)));
        }
        if compact {
            let fastest = rows.last().expect("a row");
            cells.push(if std::ptr::eq(*row, *fastest) {
                "--".into()
            } else {
                percent(faster_by(row, fastest))
            });
        } else {
            for column in &rows {
                cells.push(if std::ptr::eq(*row, *column) {
                    "--".into()
                } else {
                    percent(faster_by(row, column))
                });
            }
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
    table
        .iter()
        .map(|row| {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| format!("{cell:>w$}"))
                .collect();
            line.join(" ").trim_end().to_string()
        })
        .collect()
}

/// The lines under the table: the fastest (and whether it is really
/// faster than the runner-up or within the spread), the frugal one, the
/// flags that reproduce the fastest, and what the rows include.
fn recommendation(report: &Report) -> String {
    let rows = report.slowest_first();
    let mut out = String::new();
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
                1.0 + faster_by(fastest, slowest) / 100.0,
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
        if let Some(runner_up) = rows.len().checked_sub(2).map(|i| rows[i]) {
            let apart = faster_by(fastest, runner_up);
            let spread = fastest.spread_percent().max(runner_up.spread_percent());
            if apart <= spread {
                let _ = writeln!(
                    out,
                    "It is within the spread of {} ({apart:.0}% apart, ±{spread:.0}%): no real difference.",
                    runner_up.name
                );
            }
        }
        match reproduce(&fastest.name, report.algorithm) {
            Some(command) => {
                let _ = writeln!(out, "To get it: {command}");
            }
            None => {
                let _ = writeln!(
                    out,
                    "({} is a way to read, not a fastsum mode: it holds whole files in memory.)",
                    fastest.name
                );
            }
        }
    }
    out.push_str(
        "fastsum, slurp, read-* and mmap run inside this process (no process start-up;\n\
         fastsum's own rows include starting its threads); system tools include theirs.\n",
    );
    out
}

/// The command line that does what strategy `name` did, if fastsum has
/// one (`read-32K`: `fastsum --io=read --read-size=32K`).
fn reproduce(name: &str, algorithm: Algorithm) -> Option<String> {
    let a = if algorithm == Algorithm::Md5 {
        String::new()
    } else {
        format!(" -a {algorithm}")
    };
    if name == "fastsum" {
        return Some(format!("fastsum{a} -j 1"));
    }
    if let Some(threads) = name.strip_prefix("fastsum-j") {
        return Some(format!("fastsum{a} -j {threads}"));
    }
    if let Some(size) = name.strip_prefix("read-") {
        return Some(format!("fastsum{a} --io=read --read-size={size}"));
    }
    match name {
        "mmap" => Some(format!("fastsum{a} --io=mmap")),
        "slurp" => None,
        tool => Some(format!("{tool} (a system tool)")),
    }
}

/// The same figures as JSON, for programs.
pub fn render_json(report: &Report) -> String {
    let mut out = format!(
        "{{\"schema\":{},\"algorithm\":\"{}\",\"files\":{},\"bytes\":{},\"strategies\":[",
        fastsum::output::render::Renderer::JSON_SCHEMA_VERSION,
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
