#[test]
fn scratch() {
    for kb in [256usize, 512, 1024, 2048, 4096] {
        for depth in [100usize, 127, 129, 200, 1000, 10_000] {
            let text = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            let r = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child", "--nocapture"]).env("KB", kb.to_string()).env("DEPTH", depth.to_string())
                .output().unwrap();
            let _ = text;
            let s = String::from_utf8_lossy(&r.stdout);
            let line = s.lines().find(|l| l.starts_with("RESULT")).unwrap_or("CRASH");
            println!("kb {kb} depth {depth}: {line}");
        }
    }
}
#[test]
fn child() {
    let Ok(kb) = std::env::var("KB") else { return };
    let kb: usize = kb.parse().unwrap();
    let depth: usize = std::env::var("DEPTH").unwrap().parse().unwrap();
    let which = std::env::var("WHICH").unwrap_or_default();
    std::thread::Builder::new().stack_size(kb*1024).spawn(move || {
        let text = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let r = match which.as_str() {
            "shape" => format!("{:?}", trajan::ingest::detect::shape(&text)),
            _ => match trajan::ingest::parse_file(std::path::Path::new("/x.json"), text.as_bytes(), None) {
                Ok(_) => "ok".to_string(), Err(e) => e.to_string() },
        };
        println!("RESULT {}", &r[..r.len().min(150)]);
    }).unwrap().join().unwrap();
}
