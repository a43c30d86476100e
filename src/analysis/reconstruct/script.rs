//! Files a Python script writes, read from its source: `open(PATH, "w")` (and `"a"`, `"r+"`,
//! binary modes), `Path(PATH).write_text(...)`, `fileinput.input(PATH, inplace=True)`,
//! `shutil.copy(src, PATH)`, where PATH is a string literal or a name bound to one
//! (`path = "src/x.py"`). What it writes cannot be known without running it: the
//! reconstruction attributes it from the next view of the file or the submitted patch.

/// A quoted string at the start of `s` (after blanks): its text and the rest.
fn literal(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    let s = s.strip_prefix(['r', 'b', 'f']).filter(|r| r.starts_with(['"', '\''])).unwrap_or(s);
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &s[1..];
    let end = body.find(q)?;
    Some((body[..end].to_string(), &body[end + 1..]))
}

/// A literal, or a name bound to one (`path = "x.py"`; `p = Path("x.py")`).
fn argument(s: &str, names: &[(String, String)]) -> Option<(String, String)> {
    if let Some((text, rest)) = literal(s) {
        return Some((text, rest.to_string()));
    }
    let s = s.trim_start();
    let s = s.strip_prefix("Path(").or_else(|| s.strip_prefix("pathlib.Path(")).unwrap_or(s);
    if let Some((text, rest)) = literal(s) {
        return Some((text, rest.trim_start().strip_prefix(')').unwrap_or(rest).to_string()));
    }
    let name: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    let value = names.iter().rev().find(|(n, _)| *n == name)?;
    Some((value.1.clone(), s[name.len()..].to_string()))
}

/// `NAME = "literal"` / `NAME = Path("literal")` bindings, in order.
fn bindings(src: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in src.lines() {
        let Some((name, value)) = line.trim().split_once('=') else { continue };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') || value.starts_with('=') {
            continue;
        }
        let value = value.trim();
        let value = value.strip_prefix("Path(").or_else(|| value.strip_prefix("pathlib.Path(")).unwrap_or(value);
        if let Some((text, rest)) = literal(value)
            && rest.trim_start().trim_start_matches(')').trim().is_empty()
        {
            out.push((name.to_string(), text));
        }
    }
    out
}

/// The paths a Python source writes, in order, without repeats.
pub fn python_writes(src: &str) -> Vec<String> {
    let names = bindings(src);
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !p.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    };
    let mut rest = src;
    while let Some(p) = rest.find("open(") {
        let after = &rest[p + 5..];
        rest = after;
        if src[..src.len() - after.len() - 5].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `os.fdopen(`, `myopen(`
        }
        let Some((path, tail)) = argument(after, &names) else { continue };
        let tail = tail.trim_start().trim_start_matches(',').trim_start();
        let tail = tail.strip_prefix("mode=").unwrap_or(tail);
        let mode = literal(tail).map(|(m, _)| m).unwrap_or_default();
        if mode.contains('w') || mode.contains('a') || mode.contains('+') || mode.contains('x') {
            push(path);
        }
    }
    for marker in [".write_text(", ".write_bytes("] {
        let mut rest = src;
        while let Some(p) = rest.find(marker) {
            let before = &rest[..p];
            rest = &rest[p + marker.len()..];
            // `Path("x").write_text(` or `p.write_text(`
            let target = if let Some(open) = before.rfind("Path(") {
                literal(&before[open + 5..]).map(|(t, _)| t)
            } else {
                let name: String = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                names.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v.clone())
            };
            if let Some(t) = target {
                push(t);
            }
        }
    }
    let mut rest = src;
    while let Some(p) = rest.find("fileinput.input(") {
        rest = &rest[p + 16..];
        let call = rest.split(')').next().unwrap_or(rest);
        if call.contains("inplace=True") || call.contains("inplace=1") {
            let arg =
                call.trim_start().strip_prefix("files=").unwrap_or(call).trim_start().trim_start_matches(['[', '(']);
            if let Some((path, _)) = argument(arg, &names) {
                push(path);
            }
        }
    }
    for call in ["shutil.copy(", "shutil.copyfile(", "shutil.copy2(", "shutil.move(", "os.replace(", "os.rename("] {
        let mut rest = src;
        while let Some(p) = rest.find(call) {
            rest = &rest[p + call.len()..];
            let Some((_, tail)) = argument(rest, &names) else { continue };
            let tail = tail.trim_start().trim_start_matches(',');
            if let Some((dst, _)) = argument(tail, &names) {
                push(dst);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_found_through_literals_and_names() {
        let src = "import re\nwith open('astropy/timeseries/core.py', 'r') as f:\n    lines = f.readlines()\nwith open('astropy/timeseries/core.py', 'w') as f:\n    f.writelines(new)\n";
        assert_eq!(python_writes(src), ["astropy/timeseries/core.py"]);
        let src = "path = \"src/m.py\"\ntext = open(path).read()\nopen(path, mode='w').write(text)\n";
        assert_eq!(python_writes(src), ["src/m.py"]);
        let src = "from pathlib import Path\np = Path('a/b.py')\np.write_text(p.read_text().replace('x', 'y'))\nPath(\"c.txt\").write_text('z')\n";
        assert_eq!(python_writes(src), ["a/b.py", "c.txt"]);
        let src = "import fileinput\nfor line in fileinput.input('setup.cfg', inplace=True):\n    print(line, end='')\nshutil.copy('x.py', 'y.py')\n";
        assert_eq!(python_writes(src), ["setup.cfg", "y.py"]);
        assert!(python_writes("print(open('x').read())\nos.fdopen(fd, 'w')").is_empty());
    }
}
