//! Peak memory of one parse: `cargo run --release --example dotenv_mem --
//! agentenv|dotenvy|none [MiB]`. Generates the benchmark input in memory,
//! then parses it once and prints the input size and the process's peak
//! resident set (VmHWM from /proc/self/status) before and after the parse.
//! `write PATH [MiB]` saves the input to a file instead. An optional third argument repeats the parse N times and prints the CPU
//! time per parse (for `perf stat`, and as a load-insensitive comparison).

#[path = "../benches/support/dotenv_gen.rs"]
mod dotenv_gen;

fn vm_hwm_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// User + system CPU time of this process, from /proc/self/stat.
fn cpu_time_us() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the ")".
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    ticks * 10_000 // USER_HZ = 100
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "agentenv".into());
    if which == "write" {
        // `write PATH [MiB]`: save the input, e.g. for `agentenv dotenv parse`.
        let path = args.next().expect("write PATH [MiB]");
        let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
        std::fs::write(path, dotenv_gen::generate(mib * 1024 * 1024)).expect("write");
        return;
    }
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    // 0 MiB means the benchmark's 50-line file.
    let text = if mib == 0 {
        let big = dotenv_gen::generate(64 * 1024);
        big.lines().take(50).flat_map(|l| [l, "\n"]).collect()
    } else {
        dotenv_gen::generate(mib * 1024 * 1024)
    };
    let bytes = text.into_bytes();
    let reps: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let before = vm_hwm_kib();
    let cpu0 = cpu_time_us();
    let mut n = 0;
    for _ in 0..reps {
        n = match which.as_str() {
            "agentenv" => agentenv::dotenv::parse_bytes(std::hint::black_box(&bytes))
                .entries
                .len(),
            "dotenvy" => dotenvy::from_read_iter(std::hint::black_box(&bytes[..]))
                .map(|r| r.expect("parses"))
                .collect::<indexmap::IndexMap<_, _>>()
                .len(),
            _ => 0,
        };
    }
    let cpu = cpu_time_us() - cpu0;
    let after = vm_hwm_kib();
    if reps > 1 {
        let per = cpu as f64 / reps as f64;
        println!(
            "{which}: {reps} parses, CPU time {:.2} us per parse = {:.1} MiB/s",
            per,
            (bytes.len() as f64 / 1048576.0) / (per / 1e6)
        );
    }
    let input_kib = (bytes.len() as u64).div_ceil(1024);
    println!(
        "{which}: input {input_kib} KiB, {n} vars, peak RSS before parse {before} KiB, \
         after {after} KiB, parse added {} KiB = {:.2}x input",
        after.saturating_sub(before),
        after.saturating_sub(before) as f64 / input_kib as f64
    );
}
