//! The session environment (`agentenv env`, `exec`, `explain`).
//
// OWNER: session work (issue 3); `native`, `cache`, `into`: fast-path work
// (issue 4).

pub mod cache;
pub mod explain;
pub mod into;
pub mod native;
