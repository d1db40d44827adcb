#![forbid(unsafe_code)]

fn main() {
    std::process::exit(agentenv::internals::main());
}
