# Sourced by the test scripts: `skip WHO REASON` ends the script with a
# skip. It says SKIPPED with the reason, adds the line to $FASTSUM_SKIP_LOG
# (scripts/test lists them at its end) and exits 0; where
# FASTSUM_TESTS_REQUIRED=1 (CI, which provides everything a test needs) a
# skip is a failure: exit 1. The Rust suites do the same in
# crates/fastsum-cli/tests/cli/testenv.rs (`skip`).
skip() {
  local line="SKIPPED $1: $2"
  if [ "${FASTSUM_TESTS_REQUIRED:-}" = 1 ]; then
    echo "$line (FASTSUM_TESTS_REQUIRED=1: every skip is a failure)" >&2
    exit 1
  fi
  echo "$line" >&2
  if [ -n "${FASTSUM_SKIP_LOG:-}" ]; then echo "$line" >>"$FASTSUM_SKIP_LOG"; fi
  exit 0
}
