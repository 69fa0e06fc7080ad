//! `fastsum bench`'s pure parts: timing with a fake clock, agreement,
//! the table and the JSON.

use std::path::PathBuf;
use std::time::Duration;

use fastsum::{Algorithm, Digest};

use super::Result;

use super::export::*;
use super::strategies::*;
use super::timer::*;
use crate::term::json_string;

/// A clock that advances by scripted steps each time it is read.
struct FakeClock {
    now: Duration,
    steps: std::vec::IntoIter<Duration>,
}

impl Clock for FakeClock {
    fn now(&mut self) -> Duration {
        let now = self.now;
        self.now += self.steps.next().unwrap_or(Duration::ZERO);
        now
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn measurement(name: &str, times_ms: &[u64], rss_mib: Option<u64>) -> Measurement {
    Measurement {
        name: name.into(),
        times: times_ms.iter().map(|&t| ms(t)).collect(),
        peak_rss: rss_mib.map(|m| m << 20),
    }
}

#[test]
fn the_table_matches_a_hand_computed_cmpthese() {
    // 100 MB hashed: 1000 ms -> 100 MB/s, 625 ms -> 160 MB/s,
    // 400 ms -> 250 MB/s. Percentages by hand: 100/160-1 = -37.5%
    // ("-38%": Rust rounds half away from zero... -37.5 -> -38),
    // 100/250-1 = -60%, 160/100-1 = 60%, 160/250-1 = -36%,
    // 250/100-1 = 150%, 250/160-1 = 56.25%.
    let report = Report {
        algorithm: Algorithm::Md5,
        files: 1,
        bytes: 100_000_000,
        measurements: vec![
            measurement("mmap", &[400, 390, 410], Some(9)),
            measurement("slurp", &[1000, 1000, 1010], Some(97)),
            measurement("read-4K", &[625, 620, 630], Some(2)),
        ],
    };
    // Each column as wide as its widest cell, right-aligned, one space
    // between: Perl's layout.
    let expected = [
        "            Rate slurp read-4K mmap     median spread peak RSS",
        "  slurp 100 MB/s    --    -38% -60%    1.000 s    ±1% 97.0 MiB",
        "read-4K 160 MB/s   60%      -- -36% 625.000 ms    ±2%  2.0 MiB",
        "   mmap 250 MB/s  150%     56%   -- 400.000 ms    ±5%  9.0 MiB",
        "",
        "Fastest: mmap (250 MB/s, 2.5x slurp); least memory: read-4K (2.0 MiB vs 9.0 MiB).",
        "To get it: fastsum --io=mmap",
        "fastsum, slurp, read-* and mmap run inside this process (no process start-up;",
        "fastsum's own rows include starting its threads); system tools include theirs.",
        "",
    ]
    .join("\n");
    assert_eq!(render_table(&report, None), expected);
    // Wide enough: the same table.
    assert_eq!(render_table(&report, Some(100)), expected);
}

#[test]
fn trees_get_a_files_per_second_column() {
    let report = Report {
        algorithm: Algorithm::Xxh3,
        files: 50,
        bytes: 5_000_000,
        measurements: vec![
            measurement("a", &[100], None),
            measurement("b", &[50], None),
        ],
    };
    let table = render_table(&report, None);
    let lines: Vec<&str> = table.lines().collect();
    // 5 MB in 100 ms = 50 MB/s and 500 files/s; in 50 ms = 100 MB/s,
    // 1000 files/s; a/b - 1 = -50%, b/a - 1 = 100%.
    assert_eq!(
        lines[0],
        "       Rate  Files    a    b     median spread peak RSS"
    );
    assert_eq!(
        lines[1],
        "a 50.0 MB/s  500/s   -- -50% 100.000 ms    ±0%        -"
    );
    assert_eq!(
        lines[2],
        "b  100 MB/s 1000/s 100%   --  50.000 ms    ±0%        -"
    );
}

#[test]
fn iterations_are_timed_with_the_clock() {
    struct Constant;
    impl Strategy for Constant {
        fn name(&self) -> String {
            "constant".into()
        }
        fn digests(&self, _: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
            Ok(files.iter().map(|_| Digest::from_bytes(&[1])).collect())
        }
    }
    // Reads: start, then (t0, t1) per iteration.
    let mut clock = FakeClock {
        now: Duration::ZERO,
        steps: vec![ms(0), ms(7), ms(1), ms(5), ms(1), ms(9)].into_iter(),
    };
    let files = [PathBuf::from("x")];
    let mut evictions = 0;
    let (times, digests) = run_strategy(
        &Constant,
        Algorithm::Md5,
        &files,
        Budget::Iterations(3),
        true,
        &mut clock,
        &mut || evictions += 1,
    )
    .unwrap();
    assert_eq!(times, [ms(7), ms(5), ms(9)]);
    assert_eq!(digests.len(), 1);
    assert_eq!(evictions, 3);
    let m = Measurement {
        name: "c".into(),
        times,
        peak_rss: None,
    };
    assert_eq!(m.median(), ms(7));
    assert!((m.spread_percent() - 100.0 * 4.0 / 7.0).abs() < 1e-9);
}

#[test]
fn a_lying_strategy_is_caught() {
    struct Liar;
    impl Strategy for Liar {
        fn name(&self) -> String {
            "liar".into()
        }
        fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
            let mut d = Slurp.digests(algorithm, files)?;
            d[1] = algorithm.hash_bytes(b"not what the file holds");
            Ok(d)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, vec![i as u8; 5000 * i]).unwrap();
            p
        })
        .collect();
    let strategies: Vec<Box<dyn Strategy>> = vec![
        Box::new(FastsumDefault { threads: 1 }),
        Box::new(Slurp),
        Box::new(Streamed(64)),
        Box::new(Mapped),
        Box::new(Liar),
    ];
    let results: Vec<(String, Vec<Digest>)> = strategies
        .iter()
        .map(|s| (s.name(), s.digests(Algorithm::Sha256, &files).unwrap()))
        .collect();
    let found = disagreements(&files, &results);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, files[1]);
    assert_eq!(found[0].other.0, "liar");
    assert_eq!(found[0].reference.0, "fastsum");
}

#[test]
fn json_carries_the_same_figures() {
    let report = Report {
        algorithm: Algorithm::Md5,
        files: 1,
        bytes: 1_000_000,
        measurements: vec![
            measurement("slow", &[20], Some(1)),
            measurement("fast", &[10], None),
        ],
    };
    assert_eq!(
        render_json(&report),
        "{\"schema\":1,\"algorithm\":\"md5\",\"files\":1,\"bytes\":1000000,\"strategies\":[\
         {\"name\":\"slow\",\"median_seconds\":0.020000000,\"mb_per_second\":50.000,\"spread_percent\":0.000,\"peak_rss_bytes\":1048576,\"times_seconds\":[0.020000000]},\
         {\"name\":\"fast\",\"median_seconds\":0.010000000,\"mb_per_second\":100.000,\"spread_percent\":0.000,\"peak_rss_bytes\":null,\"times_seconds\":[0.010000000]}]}\n"
    );
}

/// A strategy's name comes from the command line: every control
/// character must come out escaped, so the JSON still parses (it escaped
/// only `\` and `"` before).
#[test]
fn json_strings_escape_control_characters() {
    assert_eq!(json_string("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(json_string("tab\there\nnl"), r#""tab\there\nnl""#);
    assert_eq!(json_string("\u{1}\u{1f}\u{7f}"), r#""\u0001\u001f\u007f""#);
    assert_eq!(json_string("é ok"), "\"é ok\"");
}

/// An empty file once gave NaN% everywhere; a narrow terminal got
/// a table wider than itself; a 0% difference inside a ±3% spread was
/// named "Fastest" with no word of doubt.
#[test]
fn empty_files_narrow_terminals_and_ties_are_reported_honestly() {
    let report = Report {
        algorithm: Algorithm::Sha256,
        files: 1,
        bytes: 0,
        measurements: vec![
            measurement("fastsum", &[100, 97, 103], Some(6)),
            measurement("read-32K", &[100, 99, 101], Some(6)),
            measurement("sha256sum", &[300, 300, 300], Some(2)),
            measurement("read-64K", &[150, 150, 150], Some(6)),
            measurement("read-128K", &[160, 160, 160], Some(6)),
            measurement("read-256K", &[170, 170, 170], Some(6)),
            measurement("read-1M", &[180, 180, 180], Some(6)),
            measurement("mmap", &[190, 190, 190], Some(6)),
        ],
    };
    let table = render_table(&report, None);
    assert!(!table.contains("NaN"), "{table}");
    assert!(!table.contains("-0%"), "{table}");
    assert!(table.contains("no real difference"), "{table}");
    assert!(
        table.contains("To get it: fastsum -a sha256 --io=read --read-size=32K\n")
            || table.contains("To get it: fastsum -a sha256 -j 1\n"),
        "{table}"
    );
    let full_width = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(
        full_width > 100,
        "the test needs a wide table: {full_width}"
    );
    let narrow = render_table(&report, Some(80));
    for line in narrow.lines() {
        assert!(line.chars().count() <= 80, "{line:?} in\n{narrow}");
    }
    assert!(
        narrow.lines().next().unwrap().contains("vs fastest"),
        "{narrow}"
    );
}

#[test]
fn the_fastest_strategy_names_its_flags() {
    assert_eq!(
        reproduce_name("read-32K"),
        "fastsum --io=read --read-size=32K"
    );
}

fn reproduce_name(name: &str) -> String {
    let report = Report {
        algorithm: Algorithm::Md5,
        files: 1,
        bytes: 10,
        measurements: vec![
            measurement(name, &[1], None),
            measurement("x", &[100], None),
        ],
    };
    let table = render_table(&report, None);
    table
        .lines()
        .find_map(|l| l.strip_prefix("To get it: "))
        .unwrap_or_default()
        .to_string()
}

/// `fastsum bench FILE` once took 35 s on a 146 MB file. By
/// default every strategy but 64-byte reads runs, sharing 5 s, at least
/// twice; with the one warm-up and a peak-memory run each, at MD5's
/// 0.25 s for 146 MB (600 MB/s) the whole run stays under 10 s.
#[test]
fn the_default_run_takes_seconds_on_a_146_mb_file() {
    struct Constant;
    impl Strategy for Constant {
        fn name(&self) -> String {
            "constant".into()
        }
        fn digests(&self, _: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
            Ok(files.iter().map(|_| Digest::from_bytes(&[1])).collect())
        }
    }
    let chosen = super::chosen_strategies(Algorithm::Md5, 1, &[]).unwrap();
    assert!(chosen.iter().all(|s| s.name() != "read-64B"));
    let names = chosen.iter().map(|s| s.name()).collect::<Vec<_>>();
    assert!(
        names.contains(&"fastsum".to_string()) && names.len() >= 8,
        "{names:?}"
    );
    let iteration = ms(250);
    let share = super::SHARED_TIME / chosen.len() as u32;
    // The clock is read at the start, then at each iteration's start and
    // end (and, from the third, before it): an iteration's time passes
    // between its start and its end.
    let (z, it) = (Duration::ZERO, iteration);
    let mut steps = vec![z, it, z, it, z];
    steps.extend([z, it, z].repeat(100));
    let mut total = iteration; // the warm-up
    for _ in &chosen {
        let mut clock = FakeClock {
            now: Duration::ZERO,
            steps: steps.clone().into_iter(),
        };
        let (times, _) = run_strategy(
            &Constant,
            Algorithm::Md5,
            &[PathBuf::from("x")],
            Budget::Share(share),
            false,
            &mut clock,
            &mut || {},
        )
        .unwrap();
        assert!(
            times.len() >= 2 && times.iter().all(|&t| t == it),
            "{times:?}"
        );
        total += times.iter().sum::<Duration>() + iteration; // and its peak-memory run
    }
    assert!(total <= Duration::from_secs(10), "{total:?}");
    // Named, 64-byte reads run.
    let named = super::chosen_strategies(Algorithm::Md5, 1, &["read-64B".into()]).unwrap();
    assert_eq!(named.len(), 1);
}
