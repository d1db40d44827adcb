//! Deterministic dotenv input for the parser benchmarks: a mix of plain,
//! `export`, double-quoted with escapes, single-quoted, comment, trailing
//! comment and blank lines. No `$` anywhere, so dotenvy expands nothing.

/// Generate about `target` bytes of dotenv text (whole lines).
pub fn generate(target: usize) -> String {
    let mut out = String::with_capacity(target + 256);
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut n = 0u64;
    while out.len() < target {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = (seed >> 33) as u32;
        // Mostly distinct keys; every 64th line repeats an earlier one.
        let k = if n % 64 == 63 { n / 2 } else { n };
        n += 1;
        match r % 10 {
            0 => out.push_str(&format!("PLAIN_KEY_{k}=value-{r}-abcdefgh\n")),
            1 => out.push_str(&format!("export EXPORTED_{k}=/usr/local/bin:/opt/x{r}\n")),
            2 => out.push_str(&format!(
                "DOUBLE_{k}=\"line one\\nline \\\"two\\\" {r} end\"\n"
            )),
            3 => out.push_str(&format!("SINGLE_{k}='it is verbatim \\n {r}'\n")),
            4 => out.push_str(&format!("# comment line number {r} with some words\n")),
            5 => out.push_str(&format!("TRAILING_{k}=value{r} # a trailing comment\n")),
            6 => out.push('\n'),
            7 => out.push_str(&format!("QUOTED_COMMENT_{k}=\"x y {r}\" # note\n")),
            8 => out.push_str(&format!("  SPACED_{k} = spaced-value-{r}  \n")),
            _ => out.push_str(&format!("TOKEN_{k}=sk-{r:08x}{r:08x}{r:08x}\n")),
        }
    }
    out
}
