//! What fastsum writes for its callers: a run's records rendered
//! ([`render`]), names in messages quoted ([`quote`]), and a list checked
//! against its files ([`check`]).

#[cfg(feature = "tree")]
pub mod check;
pub mod quote;
#[cfg(feature = "tree")]
pub mod render;
