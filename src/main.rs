mod cli;

fn main() {
    let result = cli::run();
    // What threads still running would have removed (an archive's unpacked folder) goes.
    trajan::interrupt::run_hooks();
    // A command stopped by a signal it caught ends as one killed by it (128 + its number).
    if let Some(signal) = trajan::interrupt::caught() {
        std::process::exit(trajan::interrupt::exit_status(signal));
    }
    match result {
        Ok(code) => std::process::exit(code),
        // The reader went away (`trajan runs | head`): not an error.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) => {
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("error: {}", trajan::sanitize::sanitize(&format!("{e:#}")));
            std::process::exit(2);
        }
    }
}
