//! Versioned migrations. `PRAGMA user_version` holds the number of migrations applied. A
//! migration is only ever appended to this list, never edited, and never drops user data.

/// The tables a migration creates (`CREATE TABLE` and `CREATE VIRTUAL TABLE`), read from its
/// SQL: how a database made before trajan marked its files (`PRAGMA application_id`) is known.
pub fn created_tables(sql: &str) -> impl Iterator<Item = &str> {
    sql.lines().filter_map(|line| {
        let rest = line.strip_prefix("CREATE TABLE ").or_else(|| line.strip_prefix("CREATE VIRTUAL TABLE "))?;
        rest.split(|c: char| c.is_whitespace() || c == '(').next().filter(|name| !name.is_empty())
    })
}

pub const MIGRATIONS: &[&str] = &[
    // 1: sources, runs, steps (with full-text index), edits, prompts stored once, test outcomes,
    //    predictions, tasks.
    r#"
CREATE TABLE sources (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,              -- file | harness-dir | event-dir
    format      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    hash        BLOB NOT NULL,              -- blake3 of the content
    warnings    TEXT,                       -- JSON array of strings, or NULL
    ingested_at TEXT NOT NULL
);

-- Message content stored once, addressed by a 16-byte blake3 hash: prompt messages repeated in
-- every step (SWE-agent 1.1 `query`), system prompts and demonstrations shared across runs.
CREATE TABLE blobs (
    id      INTEGER PRIMARY KEY,
    hash    BLOB NOT NULL UNIQUE,
    role    TEXT NOT NULL,
    content TEXT NOT NULL,
    extra   TEXT
);

CREATE TABLE tasks (
    id           INTEGER PRIMARY KEY,
    source_id    INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id  TEXT NOT NULL,
    instruction  TEXT,
    gold_patch   TEXT,
    fail_to_pass TEXT,                      -- JSON array
    pass_to_pass TEXT                       -- JSON array
);
CREATE INDEX tasks_instance ON tasks(instance_id);

CREATE TABLE outcomes (
    id            INTEGER PRIMARY KEY,
    source_id     INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id   TEXT NOT NULL,
    format        TEXT NOT NULL,
    model         TEXT,
    run_label     TEXT,
    resolved      INTEGER,                  -- 1, 0 or NULL (unknown)
    patch_applied INTEGER,
    patch_exists  INTEGER,
    test_count    INTEGER NOT NULL,
    log           TEXT,
    patch         TEXT
);
CREATE INDEX outcomes_instance ON outcomes(instance_id);

CREATE TABLE tests (
    outcome_id INTEGER NOT NULL REFERENCES outcomes(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    grp        TEXT,                        -- FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL
    passed     INTEGER NOT NULL,
    message    TEXT
);
CREATE INDEX tests_outcome ON tests(outcome_id);

CREATE TABLE predictions (
    id          INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id TEXT NOT NULL,
    model       TEXT,
    patch       TEXT
);
CREATE INDEX predictions_instance ON predictions(instance_id);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    instance_id     TEXT NOT NULL,
    format          TEXT NOT NULL,
    format_version  TEXT,
    agent           TEXT,
    model           TEXT,
    exit_status     TEXT,
    submission      TEXT,
    cost            REAL,
    tokens_sent     INTEGER,
    tokens_received INTEGER,
    api_calls       INTEGER,
    attempt         INTEGER,
    best_attempt    INTEGER,
    step_count      INTEGER NOT NULL,
    edit_count      INTEGER NOT NULL,
    rejected_count  INTEGER NOT NULL,          -- edits rejected by the linter or refused by the tool
    metadata        TEXT,
    -- Joins made by instance id (and model / folder when several candidates exist); kept up
    -- to date whenever a source touching the instance is written, in the same transaction.
    outcome_id      INTEGER REFERENCES outcomes(id) ON DELETE SET NULL,
    prediction_id   INTEGER REFERENCES predictions(id) ON DELETE SET NULL
);
CREATE INDEX runs_instance ON runs(instance_id);
CREATE INDEX runs_source ON runs(source_id);

CREATE TABLE history (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    pos     INTEGER NOT NULL,
    blob_id INTEGER NOT NULL REFERENCES blobs(id),
    PRIMARY KEY (run_id, pos)
) WITHOUT ROWID;
CREATE INDEX history_blob ON history(blob_id);

-- One small row per step: what a step list shows. The texts live in `step_texts`, so reading
-- the list of a 20,000-step run touches a few pages, not the overflow pages of long outputs.
CREATE TABLE steps (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx            INTEGER NOT NULL,
    tool           TEXT,
    flags          INTEGER NOT NULL,        -- bit set, see model::StepFlags
    obs_chars      INTEGER NOT NULL,
    action_head    TEXT NOT NULL,           -- the action's first line, at most 200 characters
    execution_time REAL,
    tokens_in      INTEGER,
    tokens_out     INTEGER,
    timestamp      TEXT,
    open_file      TEXT,
    working_dir    TEXT,
    query_keep     INTEGER,                 -- prompt: this many messages of the previous step's, then query_parts
    UNIQUE (run_id, idx)
);

CREATE TABLE step_texts (
    step_id     INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
    action      TEXT NOT NULL,
    thought     TEXT NOT NULL,
    observation TEXT NOT NULL,
    response    TEXT,
    args        TEXT                        -- structured tool arguments (JSON)
);

-- The messages a step's prompt adds after the ones it keeps from the previous step.
CREATE TABLE query_parts (
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    pos     INTEGER NOT NULL,
    blob_id INTEGER NOT NULL REFERENCES blobs(id),
    PRIMARY KEY (step_id, pos)
) WITHOUT ROWID;
CREATE INDEX query_parts_blob ON query_parts(blob_id);

CREATE TABLE edits (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_idx   INTEGER,                     -- NULL for the final submission patch
    path       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    status     TEXT NOT NULL,
    old_text   TEXT,
    new_text   TEXT,
    diff       TEXT,
    lint_codes TEXT                         -- comma-separated
);
CREATE INDEX edits_run ON edits(run_id, step_idx);

-- Full-text index over what the agent thought, did and saw, as the reviewer sees it (escape
-- sequences removed, so a word right after a colour code is found). Contentless: the text lives
-- once, in `steps`; rowid = steps.id; rows are deleted with their steps.
CREATE VIRTUAL TABLE steps_fts USING fts5(
    thought, action, observation,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61'
);
-- Index pages sized to the 16 KiB database pages; merge less eagerly while ingesting (the
-- index is most of the writer's time on text-heavy formats).
INSERT INTO steps_fts (steps_fts, rank) VALUES ('pgsz', 16000);
INSERT INTO steps_fts (steps_fts, rank) VALUES ('automerge', 8);
"#,
    // 2: classification. Signals per run (derived: dropped with the run, recomputed), labels
    //    (append-only, by source and rater; no foreign key so labels outlive a re-ingest: runs
    //    keep their ids), the LLM reply cache and per-run classification errors.
    r#"
CREATE TABLE signals (
    run_id  INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    hash    TEXT NOT NULL,                  -- blake3 of `json`
    json    TEXT NOT NULL
);

CREATE TABLE labels (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL,
    source           TEXT NOT NULL,         -- heuristic | llm | human
    rater            TEXT NOT NULL,         -- heuristic, the LLM's model, a reviewer
    taxonomy         TEXT NOT NULL,
    taxonomy_version TEXT NOT NULL,
    unclassified     INTEGER NOT NULL,      -- 1 when no mode is assigned
    exit_category    TEXT,
    summary          TEXT,
    note             TEXT,
    model            TEXT,                  -- LLM model, or the heuristic's version
    input_hash       TEXT,                  -- prompt hash (LLM) or signals hash (heuristic)
    tokens_in        INTEGER,
    tokens_out       INTEGER,
    cost             REAL,
    latency_ms       INTEGER,
    created_at       TEXT NOT NULL
);
CREATE INDEX labels_run ON labels(run_id, source, rater, id);

CREATE TABLE label_modes (
    label_id   INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    mode       TEXT NOT NULL,
    assigned   INTEGER NOT NULL,            -- 0: weighed, below the threshold
    confidence REAL NOT NULL,
    evidence   TEXT NOT NULL,               -- JSON [{step, note}]
    rationale  TEXT NOT NULL
);
CREATE INDEX label_modes_label ON label_modes(label_id);

CREATE TABLE llm_cache (
    model       TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    reply       TEXT NOT NULL,              -- the validated reply (JSON)
    tokens_in   INTEGER,
    tokens_out  INTEGER,
    latency_ms  INTEGER,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (model, prompt_hash)
) WITHOUT ROWID;

CREATE TABLE classify_errors (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    source     TEXT NOT NULL,
    model      TEXT,
    error      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX classify_errors_run ON classify_errors(run_id);
"#,
    // 3: verdicts computed from a test log. An outcome read from a harness folder without a
    //    report keeps its tests as the harness's log parser read them (`logged`, JSON
    //    `[{name, status, message}]`); `store::link` grades them against the task's lists and
    //    writes `resolved` and the `tests` rows, whenever the task is known.
    r#"
ALTER TABLE outcomes ADD COLUMN logged TEXT;
"#,
    // 4: reconstructed edits (analysis::reconstruct): how sure the diff of a shell edit is,
    //    the command that made it, what checked it, what undid it; the final patch's hunks
    //    traced to the steps that made them.
    r#"
ALTER TABLE edits ADD COLUMN certainty TEXT;      -- verified | contradicted | simulated | attributed | unchanged | unknown
ALTER TABLE edits ADD COLUMN command TEXT;        -- the shell command that made it
ALTER TABLE edits ADD COLUMN checked_at INTEGER;  -- the step whose view checked it; -1: the submitted patch
ALTER TABLE edits ADD COLUMN shown TEXT;          -- contradicted: what the view showed, as a diff
ALTER TABLE edits ADD COLUMN undone_at INTEGER;   -- the step whose git checkout/restore/stash undid it
ALTER TABLE edits ADD COLUMN hunks TEXT;          -- final patch: JSON [{hunk, steps, explained}]
ALTER TABLE edits ADD COLUMN partial INTEGER;     -- 1: lines never shown may have changed too
"#,
    // 5: step and edit texts compressed in chunks (store::texts), and the search index built after the
    //    write: a run's steps enter `steps_fts` in a later pass (store::search_index); until then
    //    the run is listed in `search_pending`, written in the same transaction as the run, so a
    //    search never silently misses a run. Rows written before keep their plain texts.
    r#"
CREATE TABLE text_chunks (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    body   BLOB NOT NULL                    -- zstd frame: records of consecutive steps
);
CREATE INDEX text_chunks_run ON text_chunks(run_id);
-- NULL: the texts are in this row's own columns. Otherwise they are '' and the record starts at
-- byte `chunk_at` of the decompressed chunk.
ALTER TABLE step_texts ADD COLUMN chunk_id INTEGER;
ALTER TABLE step_texts ADD COLUMN chunk_at INTEGER;
-- The same for an edit's old_text, new_text, diff, shown and hunks (NULL in the row when chunked).
ALTER TABLE edits ADD COLUMN chunk_id INTEGER;
ALTER TABLE edits ADD COLUMN chunk_at INTEGER;

CREATE TABLE search_pending (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE
);
-- The index is built in large batches: a larger in-memory buffer makes fewer, larger segments
-- to merge.
INSERT INTO steps_fts (steps_fts, rank) VALUES ('hashsize', 16777216);
"#,
    // 6: reviewers' notes on steps (bookmarks with text, not labels): one per run, step and
    //    reviewer; like labels, no foreign key (runs keep their ids when re-ingested).
    r#"
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    step_idx   INTEGER NOT NULL,
    rater      TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (run_id, step_idx, rater)
);
"#,
    // 7: a run's per-test results may come from another evaluation than its verdict: an sb-cli
    //    or harness run summary gives the verdict (resolved ids), a per-instance report beside
    //    it the tests (`store::link`). NULL: the verdict's evaluation gives the tests too.
    r#"
ALTER TABLE runs ADD COLUMN tests_outcome_id INTEGER REFERENCES outcomes(id) ON DELETE SET NULL;
"#,
    // 8: a label or a note names its run by what identifies the run across re-ingests, beside
    //    its id: the source's path, the instance, the RetryAgent attempt, and which of the
    //    source's runs with that instance and attempt it is (0 the first, in the order the source
    //    holds them). When a source is written, the labels and notes of its runs' identities are
    //    pointed at those runs (`store::identity::follow_runs`), so they follow their run through
    //    any re-ingest, even one that gave the run a new id (a source removed, then ingested
    //    again). Labels and notes of runs gone before this migration keep no identity.
    r#"
ALTER TABLE labels ADD COLUMN run_source TEXT;
ALTER TABLE labels ADD COLUMN run_instance TEXT;
ALTER TABLE labels ADD COLUMN run_attempt INTEGER;
ALTER TABLE labels ADD COLUMN run_nth INTEGER;
UPDATE labels SET
    run_source = (SELECT s.path FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.id = labels.run_id),
    run_instance = (SELECT r.instance_id FROM runs r WHERE r.id = labels.run_id),
    run_attempt = (SELECT r.attempt FROM runs r WHERE r.id = labels.run_id),
    run_nth = (SELECT count(*) FROM runs r JOIN runs o ON o.source_id = r.source_id AND o.instance_id = r.instance_id
               AND o.attempt IS r.attempt AND (o.position < r.position OR (o.position = r.position AND o.id < r.id))
               WHERE r.id = labels.run_id);
CREATE INDEX labels_identity ON labels(run_source, run_instance);
ALTER TABLE notes ADD COLUMN run_source TEXT;
ALTER TABLE notes ADD COLUMN run_instance TEXT;
ALTER TABLE notes ADD COLUMN run_attempt INTEGER;
ALTER TABLE notes ADD COLUMN run_nth INTEGER;
UPDATE notes SET
    run_source = (SELECT s.path FROM runs r JOIN sources s ON s.id = r.source_id WHERE r.id = notes.run_id),
    run_instance = (SELECT r.instance_id FROM runs r WHERE r.id = notes.run_id),
    run_attempt = (SELECT r.attempt FROM runs r WHERE r.id = notes.run_id),
    run_nth = (SELECT count(*) FROM runs r JOIN runs o ON o.source_id = r.source_id AND o.instance_id = r.instance_id
               AND o.attempt IS r.attempt AND (o.position < r.position OR (o.position = r.position AND o.id < r.id))
               WHERE r.id = notes.run_id);
CREATE INDEX notes_identity ON notes(run_source, run_instance);
"#,
    // 9: onset and blame beside a label's modes (failure-modes.md, "Failure onset and blame"):
    //    the judgement as JSON (`label::Judgement`: the onset step, its evidence, confidence and
    //    rationale; the blame value and its reason), NULL when the rater judged neither; the onset
    //    step and the blame value copied out for the statistics' filters.
    r#"
ALTER TABLE labels ADD COLUMN judgement TEXT;
ALTER TABLE labels ADD COLUMN onset_step INTEGER;
ALTER TABLE labels ADD COLUMN blame TEXT;            -- agent | task | environment
"#,
    // 10: what a step without an action says: the first words of its message, for the step list
    //     (`store::browse::says`); NULL for a step with an action, and for steps stored before.
    r#"
ALTER TABLE steps ADD COLUMN says TEXT;
"#,
];
