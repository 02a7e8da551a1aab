//! The `acesim` command.

fn main() -> std::process::ExitCode {
    let code = acesim_cli::main_with_args(std::env::args().skip(1).collect());
    std::process::ExitCode::from(code.clamp(0, 255) as u8)
}
