mod cli;

fn main() {
    match cli::run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {}", trajan::sanitize::sanitize(&format!("{e:#}")));
            std::process::exit(2);
        }
    }
}
