//! `--into FILE`: write the rendering as one owned block of a file.
//
// OWNER: fast-path work (issue 4).
