//! Connections to the server, every wait on it bounded by `wait` (`connect_timeout`, 10 s unless
//! the connection string says otherwise):
//!
//! - the whole handshake with a host (its name resolved, TCP, TLS, startup, authentication): a
//!   host that has not finished it in that time is given up and named (the next host is tried);
//! - every statement: one that has had no answer for that long (a lock waited for, a long query,
//!   or a server gone silent) has the server asked, on a new connection, whether it still answers
//!   and still holds this session; when the new connection gets no answer in as long, or the
//!   session is gone, the statement is given up with an error naming the host, and the
//!   connection is closed (the next call outside a transaction connects again).
//!
//! A runtime of one thread per connection, the caller's: it runs only while the caller waits.

use crate::error::StoreError;
use std::cell::Cell;
use std::future::Future;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, SimpleQueryMessage, Statement, ToStatement};
use tokio_postgres_rustls::MakeRustlsConnect;

/// What TLS the URL asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tls {
    Off,
    /// Offered or required; the certificate checked against these roots when given.
    On {
        roots: Option<std::path::PathBuf>,
        host_name: bool,
    },
}

/// A client error in words: the server's message, or the cause of a failed connection.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// One host to connect to: its configuration (that host alone) and its name (`host:port`).
#[derive(Clone)]
pub struct Target {
    pub config: Config,
    pub at: String,
}

/// How connections are made: in the clear, or with TLS (`Tls`).
#[derive(Clone)]
pub enum Connector {
    Plain,
    Rustls(MakeRustlsConnect),
}

impl Connector {
    pub fn new(tls: &Tls) -> Result<Connector, StoreError> {
        Ok(match tls {
            Tls::Off => Connector::Plain,
            Tls::On { roots, host_name } => {
                Connector::Rustls(MakeRustlsConnect::new(super::tls::client_config(roots.as_ref(), *host_name)?))
            }
        })
    }
}

/// Why a call failed.
pub enum Failed {
    /// The client's error, or the server's answer.
    Client(tokio_postgres::Error),
    /// The host stopped answering (or ended the session): the words name it. The connection is
    /// closed.
    Silent(String),
}

impl From<tokio_postgres::Error> for Failed {
    fn from(e: tokio_postgres::Error) -> Failed {
        Failed::Client(e)
    }
}

/// A connection to one host.
pub struct Conn {
    /// `None` once dropped (shut down without waiting for a name being resolved).
    rt: Option<Runtime>,
    client: Option<Client>,
    task: JoinHandle<()>,
    target: Target,
    tls: Connector,
    wait: Duration,
    /// The server's process for this session (`pg_backend_pid`), once [`Conn::session`] ran.
    pid: Cell<Option<i32>>,
    /// Given up on (the host stopped answering).
    dead: Cell<bool>,
}

/// A handshake that failed.
enum Shook {
    /// No end within the bound.
    Silent,
    Failed(tokio_postgres::Error),
}

fn silence(at: &str, wait: Duration) -> String {
    format!("{at} did not answer within {} s", wait.as_secs_f64())
}

/// Connect to the first of `order` whose handshake ends within `wait`; else each host's reason.
pub fn open(order: &[&Target], tls: &Connector, wait: Duration) -> Result<Conn, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the client's runtime: {e}"))?;
    let mut why = Vec::new();
    for target in order {
        match rt.block_on(handshake(target, tls, wait)) {
            Ok((client, task)) => {
                let (target, tls) = ((*target).clone(), tls.clone());
                let (pid, dead) = (Cell::new(None), Cell::new(false));
                return Ok(Conn { rt: Some(rt), client: Some(client), task, target, tls, wait, pid, dead });
            }
            Err(Shook::Silent) => why.push(format!(
                "{} (the handshake: name, TCP, TLS, startup, authentication)",
                silence(&target.at, wait)
            )),
            Err(Shook::Failed(e)) => why.push(format!("{}: {}", target.at, describe(&e))),
        }
    }
    // A name still being resolved is not waited for.
    rt.shutdown_background();
    Err(why.join("; "))
}

/// The handshake with one host, bounded as a whole; the connection's task spawned.
async fn handshake(target: &Target, tls: &Connector, wait: Duration) -> Result<(Client, JoinHandle<()>), Shook> {
    let connecting = async {
        match tls {
            Connector::Plain => {
                let (client, connection) = target.config.connect(NoTls).await?;
                Ok((client, tokio::spawn(async move { drop(connection.await) })))
            }
            Connector::Rustls(make) => {
                let (client, connection) = target.config.connect(make.clone()).await?;
                Ok((client, tokio::spawn(async move { drop(connection.await) })))
            }
        }
    };
    match tokio::time::timeout(wait, connecting).await {
        Ok(done) => done.map_err(Shook::Failed),
        Err(_) => Err(Shook::Silent),
    }
}

/// What the server said when asked whether it still answers.
enum Probe {
    Answers,
    Silent,
    Refused(String),
    SessionGone,
}

impl Conn {
    fn parts(&self) -> Result<(&Runtime, &Client), Failed> {
        match (&self.rt, &self.client) {
            (Some(rt), Some(client)) if !self.dead.get() => Ok((rt, client)),
            _ => Err(Failed::Silent(format!("the connection to {} was given up", self.target.at))),
        }
    }

    /// `call` run to its end, its silence bounded (see the module's documentation).
    fn run<'c, T, F>(&'c self, call: impl FnOnce(&'c Client) -> F) -> Result<T, Failed>
    where
        F: Future<Output = Result<T, Failed>> + 'c,
    {
        let (rt, client) = self.parts()?;
        rt.block_on(async {
            let mut call = std::pin::pin!(call(client));
            loop {
                if let Ok(done) = tokio::time::timeout(self.wait, &mut call).await {
                    return done;
                }
                let why = match self.probe().await {
                    Probe::Answers => continue,
                    Probe::Silent => format!(
                        "{} (a statement waited that long, and a new connection got no answer either)",
                        silence(&self.target.at, self.wait)
                    ),
                    Probe::Refused(e) => {
                        format!("{} stopped answering a statement, and refuses new connections: {e}", self.target.at)
                    }
                    Probe::SessionGone => format!("{}: the server no longer holds this session", self.target.at),
                };
                self.dead.set(true);
                self.task.abort();
                return Err(Failed::Silent(why));
            }
        })
    }

    /// Ask the server on a new connection whether it answers, and holds this session still.
    async fn probe(&self) -> Probe {
        let (client, task) = match handshake(&self.target, &self.tls, self.wait).await {
            Ok(c) => c,
            Err(Shook::Silent) => return Probe::Silent,
            // The server answered (too many connections, say): it is there.
            Err(Shook::Failed(e)) if e.as_db_error().is_some() => return Probe::Answers,
            Err(Shook::Failed(e)) => return Probe::Refused(describe(&e)),
        };
        let sql = match self.pid.get() {
            Some(pid) => format!("SELECT 1 FROM pg_stat_activity WHERE pid = {pid}"),
            None => "SELECT 1".to_string(),
        };
        let asked = tokio::time::timeout(self.wait, client.simple_query(&sql)).await;
        drop(client);
        task.abort();
        match asked {
            Err(_) => Probe::Silent,
            Ok(Ok(answer)) if !answer.iter().any(|m| matches!(m, SimpleQueryMessage::Row(_))) => Probe::SessionGone,
            Ok(Ok(_)) => Probe::Answers,
            Ok(Err(e)) if e.as_db_error().is_some() => Probe::Answers,
            Ok(Err(e)) => Probe::Refused(describe(&e)),
        }
    }

    /// Set the session up (`sql`: statements without results) and learn its server process.
    pub fn session(&self, sql: &str) -> Result<(), Failed> {
        let sql = format!("{sql}; SELECT pg_backend_pid()");
        let answer = self.run(|c| async move { Ok(c.simple_query(&sql).await?) })?;
        let pid = answer.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).and_then(|p| p.parse().ok()),
            _ => None,
        });
        self.pid.set(pid);
        Ok(())
    }

    pub fn prepare(&self, sql: &str) -> Result<Statement, Failed> {
        self.run(|c| async move { Ok(c.prepare(sql).await?) })
    }

    pub fn query<T: ?Sized + ToStatement + Sync>(
        &self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Failed> {
        self.run(|c| async move { Ok(c.query(statement, params).await?) })
    }

    pub fn execute<T: ?Sized + ToStatement + Sync>(
        &self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Failed> {
        self.run(|c| async move { Ok(c.execute(statement, params).await?) })
    }

    /// Statements without parameters or results.
    pub fn batch(&self, sql: &str) -> Result<(), Failed> {
        self.run(|c| async move { Ok(c.batch_execute(sql).await?) })
    }

    /// `COPY ... FROM STDIN` of `data` (COPY's text format).
    pub fn copy_in(&self, sql: &str, data: &[u8]) -> Result<u64, Failed> {
        use futures_util::SinkExt;
        self.run(|c| async move {
            let sink = c.copy_in(sql).await?;
            let mut sink = std::pin::pin!(sink);
            sink.as_mut().send(bytes::Bytes::copy_from_slice(data)).await?;
            Ok(sink.as_mut().finish().await?)
        })
    }

    /// The connection ended (the server closed it, or it was given up).
    pub fn is_closed(&self) -> bool {
        self.dead.get() || self.client.as_ref().is_none_or(Client::is_closed)
    }
}

impl Drop for Conn {
    /// The session ended politely (the server told so, within the bound), then the runtime shut
    /// down without waiting for anything else.
    fn drop(&mut self) {
        drop(self.client.take());
        if let Some(rt) = self.rt.take() {
            if !self.dead.get() {
                let (wait, task) = (self.wait, &mut self.task);
                let _ = rt.block_on(async move { tokio::time::timeout(wait, task).await });
            }
            rt.shutdown_background();
        }
    }
}
