//! fastsum's command-line tests, gathered in one test binary (one build
//! and one link instead of one a file, as ripgrep's tests/ does): each
//! module is the suite of one command or question, run against the built
//! `fastsum` and the reference tools scripts/tests/install-peers installs.

// The helpers: each suite uses its own part of them.
mod hermetic;
#[allow(dead_code)]
mod sshd;
#[allow(dead_code)]
mod testenv;

mod audit;
mod bench;
mod cache;
mod cache_fs_identity;
mod cache_home;
mod cache_settle;
mod captured_listing;
mod check_formats;
mod check_guess;
mod check_hostile;
mod check_json;
mod cksum;
mod contained;
mod coreutils_910;
mod coreutils_911;
mod diff;
mod diff_dirs;
mod differential;
mod dir_digest;
mod docs_examples;
mod dupes;
mod dupes_dirs;
mod dupes_scope;
mod fastsum_cli;
mod files_and_depth;
mod first_hour;
mod first_hour_setup;
mod first_use;
mod frictions;
mod lists_joined_respelled;
mod lists_round_trip;
mod manual;
mod memory_bounds;
mod messages;
mod multibuffer;
mod opens;
mod openssl_lists;
mod remote;
mod remote_diff;
mod remote_links;
mod remote_prune;
mod report_names;
mod s3_algorithms;
mod scrub;
mod scrub_disk;
mod scrub_hostile;
mod signed;
mod signed_openpgp;
mod tree;
mod update;
mod update_hostile;
mod update_killed;
mod update_several;
mod update_shape;
