//! The operator layer (`agentenv launch`): fill the environment from the
//! operator's `.env` / `.env.local` without overriding the host.
//
// OWNER: operator work (issue 5).
