//! `--cache`: owner-only replay of an identical earlier rendering.
//
// OWNER: fast-path work (issue 4).
