//! What is GNU coreutils' alone: its tools' `--help` texts, as coreutils
//! 9.10 prints them. The tools themselves run fastsum's main mode
//! (`crate::mode`) with their option tables and policy; which tool is
//! being imitated is `personality::Tool`.

pub(crate) mod usage;
