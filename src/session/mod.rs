//! The session environment (`agentenv env`, `exec`, `explain`).
//
// OWNER: session work (issues 3 and 4).
