//! Classifying runs with an LLM: prompts are built on the calling thread (they read the store),
//! requests run concurrently on a tokio runtime, and each answer is validated (once retried with
//! the validation error) and written with its cache entry in one transaction as it arrives. A
//! run that fails gets an error row, never a partial label; the others go on. Classifying again
//! skips runs already labelled from the same prompt and model, so an interrupted run resumes
//! where it stopped; a prompt answered before is served from the cache without a request.

use super::client::{ChatTurn, LlmClient, Role};
pub use super::prompt::system_prompt;
use super::prompt::{self, Prompt};
use super::reply::{self, Reply};
use crate::classify::signals::Signals;
use crate::error::StoreError;
use crate::label::taxonomy::Taxonomy;
use crate::label::{Label, Provenance, Source};
use crate::store::Store;
use crate::store::labels::CachedReply;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

#[derive(Debug, Clone)]
pub struct LlmOptions {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Prompt budget, in estimated tokens.
    pub budget_tokens: usize,
    /// Prices per million tokens, for cost; unknown prices leave cost empty.
    pub price_in: Option<f64>,
    pub price_out: Option<f64>,
}

impl Default for LlmOptions {
    fn default() -> Self {
        LlmOptions { concurrency: 4, budget_tokens: 24_000, price_in: None, price_out: None }
    }
}

impl LlmOptions {
    pub fn cost(&self, tokens_in: Option<u64>, tokens_out: Option<u64>) -> Option<f64> {
        let (pi, po) = (self.price_in?, self.price_out?);
        Some((tokens_in.unwrap_or(0) as f64 * pi + tokens_out.unwrap_or(0) as f64 * po) / 1e6)
    }
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct LlmReport {
    /// Runs given a new label from a request.
    pub labelled: usize,
    /// Runs given a new label from the reply cache (no request).
    pub from_cache: usize,
    /// Runs already labelled from the same prompt and model.
    pub unchanged: usize,
    pub with_modes: usize,
    pub by_mode: BTreeMap<String, usize>,
    /// Runs that failed: (run id, error). Their errors are also in the database.
    pub failed: Vec<(i64, String)>,
    /// The same failures, each distinct error once with the runs it hit (see [`group_failures`]).
    pub failed_grouped: Vec<FailureGroup>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost: Option<f64>,
    /// Latency of each answered request, in milliseconds (answer arrival minus send).
    pub latencies_ms: Vec<u64>,
    /// Replies that failed validation once and were fixed by the retry.
    pub repaired: usize,
}

/// One error and the runs that failed with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureGroup {
    /// The error, as recorded for each of the runs.
    pub error: String,
    /// How many runs (`runs.len()`).
    pub count: usize,
    /// The runs, ascending.
    pub runs: Vec<i64>,
}

/// `failed` grouped by identical error text: the most frequent first, then by text. A refused
/// connection or a wrong URL fails every run the same way; this is how to say it once.
pub fn group_failures(failed: &[(i64, String)]) -> Vec<FailureGroup> {
    let mut by_error: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (run, error) in failed {
        by_error.entry(error.as_str()).or_default().push(*run);
    }
    let mut groups: Vec<FailureGroup> = by_error
        .into_iter()
        .map(|(error, mut runs)| {
            runs.sort_unstable();
            FailureGroup { error: error.to_string(), count: runs.len(), runs }
        })
        .collect();
    // Stable: equal counts keep the text order of the map.
    groups.sort_by_key(|g| std::cmp::Reverse(g.count));
    groups
}

#[derive(Debug, thiserror::Error)]
pub enum LlmRunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// One answered request.
struct Answer {
    reply: Reply,
    tokens_in: Option<u64>,
    tokens_out: Option<u64>,
    latency: Duration,
    repaired: bool,
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

/// A run that got no label, with the tokens its requests spent all the same.
struct Failed {
    message: String,
    tokens_in: Option<u64>,
    tokens_out: Option<u64>,
}

impl Failed {
    fn new(message: String) -> Failed {
        Failed { message, tokens_in: None, tokens_out: None }
    }
}

/// Ask once; on an invalid reply, ask again with the validation error. Errors are final.
async fn ask(client: LlmClient, prompt: Prompt, taxonomy: Arc<Taxonomy>) -> Result<Answer, Failed> {
    let mut turns =
        vec![ChatTurn::new(Role::System, prompt.system.clone()), ChatTurn::new(Role::User, prompt.user.clone())];
    let first = client.complete(&turns).await.map_err(|e| Failed::new(e.to_string()))?;
    let invalid = match reply::parse(&first.content, &taxonomy, prompt.steps) {
        Ok(reply) => {
            let (tokens_in, tokens_out, latency) = (first.tokens_in, first.tokens_out, first.latency);
            return Ok(Answer { reply, tokens_in, tokens_out, latency, repaired: false });
        }
        Err(invalid) => invalid,
    };
    turns.push(ChatTurn::new(Role::Assistant, first.content.clone()));
    turns.push(ChatTurn::new(
        Role::User,
        format!("That reply is invalid: {invalid}. Reply again with the corrected JSON object only."),
    ));
    let spent = |message: String, second: Option<&super::client::Completion>| Failed {
        message,
        tokens_in: add(first.tokens_in, second.and_then(|c| c.tokens_in)),
        tokens_out: add(first.tokens_out, second.and_then(|c| c.tokens_out)),
    };
    let second = match client.complete(&turns).await {
        Ok(c) => c,
        Err(e) => return Err(spent(format!("{e} (after an invalid reply: {invalid})"), None)),
    };
    match reply::parse(&second.content, &taxonomy, prompt.steps) {
        Ok(reply) => Ok(Answer {
            reply,
            tokens_in: add(first.tokens_in, second.tokens_in),
            tokens_out: add(first.tokens_out, second.tokens_out),
            latency: first.latency + second.latency,
            repaired: true,
        }),
        Err(e) => Err(spent(format!("invalid reply after one retry: {e} (first: {invalid})"), Some(&second))),
    }
}

/// The label an LLM reply gives (modes under the threshold are kept as considered).
pub fn label_from(
    run_id: i64,
    model: &str,
    taxonomy: &Taxonomy,
    signals: &Signals,
    reply: &Reply,
    provenance: Provenance,
) -> Label {
    let (modes, considered) = reply.modes.iter().cloned().partition(|m| m.confidence >= taxonomy.assign_threshold);
    Label {
        run_id,
        source: Source::Llm,
        rater: model.to_string(),
        taxonomy: taxonomy.name.clone(),
        taxonomy_version: taxonomy.version.clone(),
        modes,
        considered,
        exit_category: signals.exit.name().into(),
        summary: reply.summary.clone(),
        provenance,
        judgement: reply.judgement.clone(),
    }
}

/// A run ready to send: its prompt and signals.
pub struct Prepared {
    pub run_id: i64,
    pub prompt: Prompt,
    pub signals: Signals,
}

pub fn prepare(
    store: &Store,
    taxonomy: &Taxonomy,
    run_id: i64,
    budget_tokens: usize,
) -> Result<Prepared, crate::classify::pipeline::RunError> {
    let run = crate::classify::from_store::run_input(store, run_id)?;
    let signals = crate::classify::pipeline::measure(&run)?;
    let prompt = prompt::build(taxonomy, &run, &signals, budget_tokens);
    Ok(Prepared { run_id, prompt, signals })
}

/// Classify `runs` with the LLM behind `client`. `progress` is called as each run finishes.
pub fn classify_llm(
    store: &mut Store,
    taxonomy: &Taxonomy,
    runs: &[i64],
    client: &LlmClient,
    opts: &LlmOptions,
    mut progress: impl FnMut(usize),
) -> Result<LlmReport, LlmRunError> {
    let model = client.settings().model.clone();
    let latest = store.latest_input_hashes(Source::Llm, &model, &taxonomy.name, &taxonomy.version)?;
    let taxonomy_arc = Arc::new(taxonomy.clone());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut report = LlmReport::default();
    let mut done = 0usize;
    rt.block_on(async {
        let mut in_flight: JoinSet<(Prepared, Instant, Result<Answer, Failed>)> = JoinSet::new();
        // Which run each task serves, so a task that panics is still charged to its run.
        let mut task_runs: HashMap<tokio::task::Id, i64> = HashMap::new();
        let mut queue = runs.iter();
        loop {
            while in_flight.len() < opts.concurrency.max(1) {
                let Some(&run_id) = queue.next() else { break };
                let p = match prepare(store, taxonomy, run_id, opts.budget_tokens) {
                    Ok(p) => p,
                    Err(e) => {
                        store.record_classify_error(run_id, Source::Llm, Some(&model), &e.to_string())?;
                        report.failed.push((run_id, e.to_string()));
                        done += 1;
                        progress(done);
                        continue;
                    }
                };
                let answered = if latest.get(&run_id) == Some(&p.prompt.hash) {
                    report.unchanged += 1;
                    true
                } else if let Some(reply) = store
                    .llm_cached(&model, &p.prompt.hash)?
                    .and_then(|c| serde_json::from_str::<Reply>(&c.reply).ok().map(|r| (r, c)))
                {
                    let (reply, cached) = reply;
                    let prov = Provenance {
                        model: Some(model.clone()),
                        input_hash: Some(p.prompt.hash.clone()),
                        tokens_in: cached.tokens_in,
                        tokens_out: cached.tokens_out,
                        cost: Some(0.0),
                        latency_ms: Some(0),
                    };
                    let label = label_from(run_id, &model, taxonomy, &p.signals, &reply, prov);
                    store.add_label(&label, None)?;
                    report.from_cache += 1;
                    count(&mut report, &label);
                    true
                } else {
                    false
                };
                if answered {
                    done += 1;
                    progress(done);
                } else {
                    let id = spawn(&mut in_flight, client, p, &taxonomy_arc);
                    task_runs.insert(id, run_id);
                }
            }
            let Some(joined) = in_flight.join_next().await else { break };
            let (p, sent, result) = match joined {
                Ok(x) => {
                    task_runs.retain(|_, r| *r != x.0.run_id);
                    x
                }
                Err(e) => {
                    let run_id = task_runs.remove(&e.id()).unwrap_or(-1);
                    let message = format!("the request task failed: {e}");
                    store.record_classify_error(run_id, Source::Llm, Some(&model), &message)?;
                    report.failed.push((run_id, message));
                    done += 1;
                    progress(done);
                    continue;
                }
            };
            match result {
                Ok(answer) => {
                    let latency_ms = sent.elapsed().as_millis() as u64;
                    report.latencies_ms.push(latency_ms);
                    let cost = opts.cost(answer.tokens_in, answer.tokens_out);
                    let prov = Provenance {
                        model: Some(model.clone()),
                        input_hash: Some(p.prompt.hash.clone()),
                        tokens_in: answer.tokens_in,
                        tokens_out: answer.tokens_out,
                        cost,
                        latency_ms: Some(answer.latency.as_millis() as u64),
                    };
                    let label = label_from(p.run_id, &model, taxonomy, &p.signals, &answer.reply, prov);
                    let cached = CachedReply {
                        reply: serde_json::to_string(&answer.reply).map_err(|e| StoreError::Encode(e.to_string()))?,
                        tokens_in: answer.tokens_in,
                        tokens_out: answer.tokens_out,
                        latency_ms: Some(answer.latency.as_millis() as u64),
                    };
                    store.save_llm_label(&p.prompt.hash, &cached, &label)?;
                    report.labelled += 1;
                    report.repaired += usize::from(answer.repaired);
                    report.tokens_in += answer.tokens_in.unwrap_or(0);
                    report.tokens_out += answer.tokens_out.unwrap_or(0);
                    if let Some(c) = cost {
                        *report.cost.get_or_insert(0.0) += c;
                    }
                    count(&mut report, &label);
                }
                Err(f) => {
                    // Failed runs cost tokens too: counted in the report and named in the error.
                    report.tokens_in += f.tokens_in.unwrap_or(0);
                    report.tokens_out += f.tokens_out.unwrap_or(0);
                    let cost = opts.cost(f.tokens_in, f.tokens_out);
                    if let Some(c) = cost {
                        *report.cost.get_or_insert(0.0) += c;
                    }
                    let message = match (f.tokens_in, f.tokens_out) {
                        (None, None) => f.message,
                        (i, o) => format!("{} ({} tokens in, {} out spent)", f.message, i.unwrap_or(0), o.unwrap_or(0)),
                    };
                    store.record_classify_error(p.run_id, Source::Llm, Some(&model), &message)?;
                    report.failed.push((p.run_id, message));
                }
            }
            done += 1;
            progress(done);
        }
        Ok::<(), LlmRunError>(())
    })?;
    report.failed_grouped = group_failures(&report.failed);
    Ok(report)
}

fn spawn(
    set: &mut JoinSet<(Prepared, Instant, Result<Answer, Failed>)>,
    client: &LlmClient,
    p: Prepared,
    taxonomy: &Arc<Taxonomy>,
) -> tokio::task::Id {
    let client = client.clone();
    let taxonomy = Arc::clone(taxonomy);
    set.spawn(async move {
        let sent = Instant::now();
        let result = ask(client, p.prompt.clone(), taxonomy).await;
        (p, sent, result)
    })
    .id()
}

fn count(report: &mut LlmReport, label: &Label) {
    if !label.modes.is_empty() {
        report.with_modes += 1;
    }
    for m in &label.modes {
        *report.by_mode.entry(m.mode.clone()).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_grouped_by_error_most_frequent_first() {
        let failed = vec![
            (7, "timed out".to_string()),
            (3, "refused".to_string()),
            (1, "refused".to_string()),
            (9, "HTTP 500".to_string()),
            (2, "refused".to_string()),
            (4, "timed out".to_string()),
        ];
        let groups = group_failures(&failed);
        let shown: Vec<(&str, usize, &[i64])> =
            groups.iter().map(|g| (g.error.as_str(), g.count, g.runs.as_slice())).collect();
        assert_eq!(shown, [("refused", 3, &[1, 2, 3][..]), ("timed out", 2, &[4, 7][..]), ("HTTP 500", 1, &[9][..])]);
        assert!(group_failures(&[]).is_empty());
    }
}
