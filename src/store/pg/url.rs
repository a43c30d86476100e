//! A PostgreSQL connection string (`postgres://user:password@host:port/db?sslmode=require`, or
//! libpq's `host=db user=ann password='...'` pairs; read by `conninfo.rs`, once, as libpq reads
//! it): what is shown of it (never the password), the hosts it names (tried in turn; each named in
//! errors), the TLS it asks for, and the bound of every wait on the server (`connect_timeout`,
//! `connect.rs`).
//!
//! `sslmode` is read as libpq reads it: `disable` connects in the clear; `allow` and `prefer`
//! (the default) use TLS when the server offers it; `require` insists on TLS; none of these
//! checks the server's certificate unless `sslrootcert` names a file of trusted certificates
//! (then the chain is checked, as libpq does). `verify-ca` and `verify-full` check the chain
//! against `sslrootcert` (default `~/.postgresql/root.crt`) and the host name.

use super::connect::{Conn, Target, Tls};
use super::conninfo::Conninfo;
use crate::error::StoreError;
use std::path::PathBuf;
use std::time::Duration;
use tokio_postgres::config::{ChannelBinding, SslMode, SslNegotiation, TargetSessionAttrs};

/// How long a host may take to answer (`connect_timeout` unless given): the whole handshake, and
/// a statement's silence before the server is asked whether it still answers.
pub const WAIT: Duration = Duration::from_secs(10);

/// A connection string read.
#[derive(Clone)]
pub struct PgUrl {
    /// One configuration a host, in the order given.
    targets: Vec<Target>,
    /// `load_balance_hosts=random`: the hosts tried from a place of chance.
    shuffle: bool,
    /// The string as given, the password replaced by `***`.
    shown: String,
    /// The password, to scrub from any message that might echo it.
    password: Option<String>,
    tls: Tls,
    /// The bound of each wait on a host ([`WAIT`], or `connect_timeout`).
    wait: Duration,
    /// The role it logs in as, when it names one.
    user: Option<String>,
    /// `host:port/database`: where it is, in few columns (a header's).
    short: String,
}

impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Whether `text` names a PostgreSQL server rather than a file: a `postgres://` or
/// `postgresql://` URL, or libpq `key=value` pairs (`host=db ...`).
pub fn is_url(text: &str) -> bool {
    super::conninfo::is_conninfo(text)
}

/// The values of a comma-separated list (libpq's multiple hosts and ports).
fn list(value: &str) -> Vec<String> {
    value.split(',').map(str::to_string).collect()
}

/// A number of seconds (`connect_timeout`, the keepalives); `what` names it in an error.
fn seconds(value: &str, what: &str) -> Result<i64, String> {
    value.trim().parse().map_err(|_| format!("{what} is not a whole number of seconds"))
}

/// One of `choices` (a keyword's values are no secret: the value is named).
fn one_of<T: Copy>(key: &str, value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices.iter().find(|(name, _)| *name == value).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        format!("{key} {value:?} is not one of {}", names.join(", "))
    })
}

impl PgUrl {
    pub fn parse(text: &str) -> Result<PgUrl, StoreError> {
        let info = Conninfo::parse(text).map_err(|r| StoreError::BadUrl { url: r.shown, why: r.why })?;
        let shown = info.shown.clone();
        PgUrl::of(info).map_err(|why| StoreError::BadUrl { url: shown, why })
    }

    fn of(info: Conninfo) -> Result<PgUrl, String> {
        let mut config = tokio_postgres::Config::new();
        config.application_name("trajan");
        let (mut mode, mut root, mut wait) = ("prefer".to_string(), None, WAIT);
        let (mut hosts, mut addrs, mut ports, mut shuffle) = (Vec::new(), Vec::new(), Vec::new(), false);
        for (key, value) in &info.pairs {
            match key.as_str() {
                "host" => hosts = list(value),
                "hostaddr" => {
                    addrs = list(value)
                        .iter()
                        .map(|a| {
                            a.trim()
                                .parse::<std::net::IpAddr>()
                                .map_err(|_| "hostaddr is not an IP address".to_string())
                        })
                        .collect::<Result<_, _>>()?
                }
                "port" => {
                    ports = list(value)
                        .iter()
                        .map(|p| match p.trim() {
                            "" => Ok(5432),
                            p => {
                                p.parse::<u16>().ok().filter(|&p| p > 0).ok_or("a port is not a number from 1 to 65535")
                            }
                        })
                        .collect::<Result<_, _>>()?
                }
                "dbname" => {
                    config.dbname(value);
                }
                "user" => {
                    config.user(value);
                }
                "password" => {
                    config.password(value);
                }
                "options" => {
                    config.options(value);
                }
                "application_name" => {
                    config.application_name(value);
                }
                "connect_timeout" => {
                    // At least a second; none (0) is the default bound, never no bound.
                    let s = seconds(value, "connect_timeout")?;
                    wait = if s > 0 { Duration::from_secs(s.unsigned_abs()) } else { WAIT };
                }
                "keepalives" => {
                    config.keepalives(seconds(value, key)? != 0);
                }
                "keepalives_idle" => {
                    config.keepalives_idle(secs(seconds(value, key)?));
                }
                "keepalives_interval" => {
                    config.keepalives_interval(secs(seconds(value, key)?));
                }
                "keepalives_count" => {
                    config.keepalives_retries(u32::try_from(seconds(value, key)?).map_err(|_| "keepalives_count < 0")?);
                }
                "tcp_user_timeout" => {
                    config.tcp_user_timeout(secs(seconds(value, key)?));
                }
                "sslmode" => mode = value.clone(),
                "sslrootcert" => root = Some(PathBuf::from(value)),
                "sslnegotiation" => {
                    use SslNegotiation::*;
                    config.ssl_negotiation(one_of(key, value, &[("postgres", Postgres), ("direct", Direct)])?);
                }
                "target_session_attrs" => {
                    use TargetSessionAttrs::*;
                    let choices = [("any", Any), ("read-write", ReadWrite), ("read-only", ReadOnly)];
                    config.target_session_attrs(one_of(key, value, &choices)?);
                }
                "channel_binding" => {
                    use ChannelBinding::*;
                    let choices = [("disable", Disable), ("prefer", Prefer), ("require", Require)];
                    config.channel_binding(one_of(key, value, &choices)?);
                }
                "load_balance_hosts" => shuffle = one_of(key, value, &[("disable", false), ("random", true)])?,
                other => return Err(format!("trajan does not read {other}")),
            }
        }
        let tls = match mode.as_str() {
            "disable" => Tls::Off,
            "allow" | "prefer" | "require" => Tls::On { roots: root, host_name: false },
            "verify-ca" | "verify-full" => {
                Tls::On { roots: Some(root.unwrap_or_else(default_root_cert)), host_name: mode == "verify-full" }
            }
            other => {
                return Err(format!(
                    "sslmode {other:?} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ));
            }
        };
        config.ssl_mode(match (&tls, mode.as_str()) {
            (Tls::Off, _) => SslMode::Disable,
            (_, "allow" | "prefer") => SslMode::Prefer,
            _ => SslMode::Require,
        });
        config.connect_timeout(wait);
        let password = config.get_password().map(|p| String::from_utf8_lossy(p).into_owned()).filter(|p| !p.is_empty());
        let targets = targets(&config, &hosts, &addrs, &ports)?;
        let user = config.get_user().map(str::to_string).filter(|u| !u.is_empty());
        let at = targets.first().map(|t| t.at.clone()).unwrap_or_default();
        let short = match config.get_dbname() {
            Some(db) => format!("{at}/{db}"),
            None => at,
        };
        Ok(PgUrl { targets, shuffle, shown: info.shown, password, tls, wait, user, short })
    }

    /// The string without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// `host:port/database`, without the scheme, user, password or options: where the store is,
    /// in the few columns of a header.
    pub fn short(&self) -> &str {
        &self.short
    }

    /// The role the URL logs in as, when it names one (`postgres://ann@db/trajan`: `ann`).
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// `host:port` of the first server.
    pub fn host_port(&self) -> String {
        self.targets.first().map(|t| t.at.clone()).unwrap_or_default()
    }

    /// `message` with the password taken out, wherever it appears.
    pub fn scrub(&self, message: &str) -> String {
        match &self.password {
            Some(p) => message.replace(p.as_str(), "***"),
            None => message.to_string(),
        }
    }

    /// A connection to the first host that answers, with TLS as asked; each host's handshake
    /// bounded ([`WAIT`]). The error names each host and why (never the password).
    pub fn connect(&self) -> Result<Conn, StoreError> {
        let mut order: Vec<&Target> = self.targets.iter().collect();
        if self.shuffle {
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            let at = nanos as usize % order.len().max(1);
            order.rotate_left(at);
        }
        let fail = |why: String| StoreError::Connect {
            at: self.targets.iter().map(|t| t.at.as_str()).collect::<Vec<_>>().join(", "),
            url: self.shown.clone(),
            why: self.scrub(&why),
        };
        let tls = super::connect::Connector::new(&self.tls)?;
        super::connect::open(&order, &tls, self.wait).map_err(fail)
    }

    /// The bound of each wait on a host.
    pub fn wait(&self) -> Duration {
        self.wait
    }
}

fn secs(s: i64) -> Duration {
    Duration::from_secs(s.max(0).unsigned_abs())
}

/// One configuration a host: `hosts` (else the addresses) with their ports (one for all, or one
/// each) and addresses.
fn targets(
    config: &tokio_postgres::Config,
    hosts: &[String],
    addrs: &[std::net::IpAddr],
    ports: &[u16],
) -> Result<Vec<Target>, String> {
    let names: Vec<String> = match hosts.iter().any(|h| !h.is_empty()) {
        true => hosts.to_vec(),
        false => addrs.iter().map(ToString::to_string).collect(),
    };
    if names.is_empty() || names.iter().any(String::is_empty) {
        return Err("no host".into());
    }
    if !addrs.is_empty() && addrs.len() != names.len() {
        return Err(format!("{} hosts and {} addresses (hostaddr)", names.len(), addrs.len()));
    }
    if ports.len() > 1 && ports.len() != names.len() {
        return Err(format!("{} hosts and {} ports", names.len(), ports.len()));
    }
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        let mut c = config.clone();
        c.host(name).port(port);
        if let Some(addr) = addrs.get(i) {
            c.hostaddr(*addr);
        }
        out.push(Target { config: c, at: format!("{name}:{port}") });
    }
    Ok(out)
}

/// libpq's default file of trusted certificates.
fn default_root_cert() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(".postgresql/root.crt")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short form a header shows: host, port and database; no user, password or options.
    #[test]
    fn a_url_in_short_is_its_server_and_database() {
        let url = PgUrl::parse("postgres://ann:secret@db.example:6543/trajan?sslmode=require")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.short(), "db.example:6543/trajan");
        assert_eq!(url.user(), Some("ann"));
        let pairs = PgUrl::parse("host=db dbname=reviews user=bob").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((pairs.short(), pairs.user()), ("db:5432/reviews", Some("bob")));
    }

    #[test]
    fn the_password_is_never_shown() {
        let shown = |u: &str| PgUrl::parse(u).map(|p| p.shown().to_string()).unwrap_or_else(|e| panic!("{e}"));
        let url = "postgres://ann:s3cr%40t@db.example:6543/trajan?sslmode=require&password=other";
        assert_eq!(shown(url), "postgres://ann:***@db.example:6543/trajan?sslmode=require&password=***");
        assert_eq!(shown("postgres://ann@host/db"), "postgres://ann@host/db");
        let parsed = PgUrl::parse("postgres://ann:hunter2@db.example:6543/trajan").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.host_port(), "db.example:6543");
        assert_eq!(format!("{parsed:?}"), "postgres://ann:***@db.example:6543/trajan");
        assert_eq!(parsed.scrub("bad password hunter2 for ann"), "bad password *** for ann");
    }

    #[test]
    fn sslmode_is_read_as_libpq_reads_it() {
        let tls = |u: &str| PgUrl::parse(u).map(|p| p.tls);
        assert_eq!(tls("postgres://h/d?sslmode=disable").ok(), Some(Tls::Off));
        assert_eq!(tls("postgres://h/d").ok(), Some(Tls::On { roots: None, host_name: false }));
        assert_eq!(
            tls("postgres://h/d?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem").ok(),
            Some(Tls::On { roots: Some("/tmp/ca.pem".into()), host_name: true })
        );
        let err = PgUrl::parse("postgres://u:pw@h/d?sslmode=maybe").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("sslmode") && !err.contains("pw"), "{err}");
    }
}
