//! A connection string read once, as libpq reads it: a URI
//! `postgresql://[user[:password]@][host[:port][,...]][/dbname][?key=value&...]` (each part
//! percent-decoded) or `key=value` pairs (`host=db password='a b'`, a value quoted with `'` and
//! `\`). What libpq would read otherwise than was meant is refused, and no refusal shows a secret:
//!
//! - more than one `@` before the URI's first `/`: libpq takes the first as the end of the
//!   password and the rest (a piece of the password) as the host, which it sends to the resolver;
//! - an `@` after the first `/` with none before it: libpq reads the user name as the host, a
//!   password's head as the port and its tail as the database;
//! - a `?` in the user name; a word without `=` among pairs (a value's unquoted space);
//!
//! (`%40`, `%2F` and `%3F` write `@`, `/` and `?` in a URI.) A key that is not a libpq keyword is
//! not named in the refusal (it may be a piece of a password); no value is ever named.

/// The keywords trajan reads (libpq's names).
pub const READ: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "connect_timeout",
    "options",
    "application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslmode",
    "sslrootcert",
    "sslnegotiation",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// libpq's other keywords: named when refused (no piece of a secret).
const OTHER: &[&str] = &[
    "passfile",
    "require_auth",
    "client_encoding",
    "fallback_application_name",
    "replication",
    "gssencmode",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
];

/// A connection string read: its keywords and values, and how it is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Conninfo {
    /// (keyword, value), in the order given (of a keyword given twice, the last counts).
    pub pairs: Vec<(String, String)>,
    /// The string as given, every password replaced by `***`.
    pub shown: String,
}

/// A string refused: how to show it (without anything it holds), and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub shown: String,
    pub why: String,
}

const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// Whether `text` names a PostgreSQL server rather than a file: a `postgres://` or
/// `postgresql://` URI, or `key=value` pairs that start with a libpq keyword (`host=db ...`; a
/// file of such a name is given as `./host=db`).
pub fn is_conninfo(text: &str) -> bool {
    if SCHEMES.iter().any(|s| text.starts_with(s)) {
        return true;
    }
    let rest = text.trim_start();
    let key: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let after = rest[key.len()..].trim_start();
    after.starts_with('=') && known(&key)
}

fn known(key: &str) -> bool {
    READ.contains(&key) || OTHER.contains(&key)
}

impl Conninfo {
    /// The value of `key` (the last given).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Read `text`, a URI or `key=value` pairs.
    pub fn parse(text: &str) -> Result<Conninfo, Refused> {
        let read = match SCHEMES.iter().find(|s| text.starts_with(*s)) {
            Some(scheme) => uri(scheme, &text[scheme.len()..]),
            None => pairs(text),
        };
        let info = read.map_err(|why| Refused { shown: refused_shown(text), why })?;
        for (key, _) in &info.pairs {
            if !READ.contains(&key.as_str()) {
                let why = match OTHER.contains(&key.as_str()) {
                    true => format!("trajan does not read {key}"),
                    false => format!(
                        "a parameter is no libpq keyword (not named: it may be a piece of a password); trajan reads {}",
                        READ.join(", ")
                    ),
                };
                return Err(Refused { shown: refused_shown(text), why });
            }
        }
        Ok(info)
    }
}

/// A refused string as shown: its scheme alone.
fn refused_shown(text: &str) -> String {
    match SCHEMES.iter().find(|s| text.starts_with(*s)) {
        Some(scheme) => format!("{scheme}…"),
        None => "the connection string".into(),
    }
}

const ENCODE: &str = "write '@', '/' and '?' in a user name, password or value as %40, %2F and %3F";

/// The part of a URI after its scheme.
fn uri(scheme: &str, rest: &str) -> Result<Conninfo, String> {
    let slash = rest.find('/').unwrap_or(rest.len());
    let (userinfo, after) = match rest[..slash].matches('@').count() {
        0 if rest[slash..].contains('@') => {
            return Err(format!("the URL has an '@' after its first '/' and none before it; {ENCODE}"));
        }
        0 => (None, rest),
        1 => rest.split_once('@').map_or((None, rest), |(u, a)| (Some(u), a)),
        _ => return Err(format!("the URL has more than one '@' before its first '/'; {ENCODE}")),
    };
    let mut info = Conninfo { pairs: Vec::new(), shown: scheme.to_string() };
    if let Some(userinfo) = userinfo {
        let (user, password) = userinfo.split_once(':').map_or((userinfo, None), |(u, p)| (u, Some(p)));
        if user.contains('?') {
            return Err(format!("the URL's user name holds a '?'; {ENCODE}"));
        }
        info.shown.push_str(user);
        if !user.is_empty() {
            info.pairs.push(("user".into(), decode(user, "the user name")?));
        }
        if let Some(password) = password {
            info.shown.push_str(":***");
            if !password.is_empty() {
                info.pairs.push(("password".into(), decode(password, "the password")?));
            }
        }
        info.shown.push('@');
    }
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (hostspec, tail) = after.split_at(end);
    hosts(hostspec, &mut info.pairs)?;
    info.shown.push_str(hostspec);
    let (path, query) = tail.split_once('?').map_or((tail, None), |(p, q)| (p, Some(q)));
    info.shown.push_str(path);
    if let Some(db) = path.strip_prefix('/').filter(|d| !d.is_empty()) {
        info.pairs.push(("dbname".into(), decode(db, "the database name")?));
    }
    if let Some(query) = query {
        let mut shown = Vec::new();
        for (n, pair) in query.split('&').filter(|p| !p.is_empty()).enumerate() {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(format!("parameter {} of the URL has no '='; {ENCODE}", n + 1));
            };
            let (key, value) = (decode(key, "a parameter's name")?, decode(value, "a parameter's value")?);
            // libpq reads JDBC's `ssl=true` as `sslmode=require`.
            let (key, value) = match (key.as_str(), value.as_str()) {
                ("ssl", "true") => ("sslmode".to_string(), "require".to_string()),
                _ => (key, value),
            };
            shown.push(if key == "password" { "password=***".to_string() } else { pair.to_string() });
            info.pairs.push((key, value));
        }
        info.shown.push('?');
        info.shown.push_str(&shown.join("&"));
    }
    Ok(info)
}

/// The hosts of a URI (`h1:5432,[::1]:5433`), as `host` and `port` lists.
fn hosts(spec: &str, pairs: &mut Vec<(String, String)>) -> Result<(), String> {
    if spec.is_empty() {
        return Ok(());
    }
    let (mut hosts, mut ports) = (Vec::new(), Vec::new());
    for one in spec.split(',') {
        let (host, port) = match one.strip_prefix('[') {
            Some(v6) => {
                let (addr, after) = v6.split_once(']').ok_or("an IPv6 address in the URL lacks its ']'")?;
                match after {
                    "" => (addr, None),
                    _ => (addr, Some(after.strip_prefix(':').ok_or("text after an IPv6 address's ']' in the URL")?)),
                }
            }
            None => one.split_once(':').map_or((one, None), |(h, p)| (h, Some(p))),
        };
        hosts.push(decode(host, "a host")?);
        ports.push(decode(port.unwrap_or(""), "a port")?);
    }
    pairs.push(("host".into(), hosts.join(",")));
    if ports.iter().any(|p| !p.is_empty()) {
        pairs.push(("port".into(), ports.join(",")));
    }
    Ok(())
}

/// A percent-encoded part decoded; `what` names it in an error (never its text).
fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2)) else {
            return Err(format!("{what} in the URL has a '%' not followed by two hexadecimal digits"));
        };
        match (high * 16 + low) as u8 {
            0 => return Err(format!("{what} in the URL holds %00")),
            b => out.push(b),
        }
        i += 3;
    }
    String::from_utf8(out).map_err(|_| format!("{what} in the URL is not UTF-8 once decoded"))
}

/// `key=value` pairs, as libpq's `conninfo_parse` reads them.
fn pairs(text: &str) -> Result<Conninfo, String> {
    let mut chars = text.chars().peekable();
    let mut info = Conninfo { pairs: Vec::new(), shown: String::new() };
    let mut shown = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let n = info.pairs.len() + 1;
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            let quote = "quote a value that holds a space: password='a b'";
            return Err(format!("word {n} of the connection string has no '=' after it; {quote}"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("value {n} of the connection string has no closing quote")),
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                match c {
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        }
        shown.push(match key.as_str() {
            "password" => "password=***".to_string(),
            _ => format!("{key}={}", quoted(&value)),
        });
        info.pairs.push((key, value));
    }
    info.shown = shown.join(" ");
    Ok(info)
}

/// A value as `key=value` pairs write it: quoted when it is empty or holds a space, a quote or a
/// backslash.
fn quoted(value: &str) -> String {
    if !value.is_empty() && !value.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        return value.to_string();
    }
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests;
