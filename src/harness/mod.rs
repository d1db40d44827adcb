//! The harness environment (`agentenv harness …`).
//
// OWNER: harness work (issue 6).
