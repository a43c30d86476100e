//! PostgreSQL migrations, applied by `trajan migrate` (a role that owns the database); no other
//! command changes the schema, so the roles of reviewers and workers need no DDL. `trajan_schema`
//! holds the number applied; a migration is only ever appended, never edited.
//!
//! The tables are SQLite's (the same names, columns and meaning: see docs/ARCHITECTURE.md), so a
//! store copies across table by table, with these differences: integers are `bigint` (flags and
//! booleans 0/1 as in SQLite), text is `text COLLATE "C"` (ordered by bytes, as SQLite orders),
//! blobs `bytea`; rows SQLite tells apart by `rowid` (`tests`, `label_modes`) have an `id`; run ids
//! come from `runs_id_seq` (a run keeps its id across a replace, and no id is handed out twice);
//! a foreign key to a run follows it when the run is given another id (`ON UPDATE CASCADE`).
//! Search has no FTS5: `step_terms` holds each step's terms as SQLite's tokenizer makes them
//! (`store::terms`), in pieces; `step_lexemes` each step's distinct terms and pairs of
//! neighbouring terms as a `tsvector` under a GIN index (migration 5; `pg/term_rows.rs`).

/// Storage settings that speed up writing and do not change what is stored, applied after the
/// migrations where the server allows them (each in a savepoint of its own): the large texts
/// compressed with lz4 rather than pglz (several times faster; a server built without lz4 keeps
/// pglz), and a larger pending list for the keys' index (its entries are merged in fewer, larger
/// passes; an ingest ends by merging what is left, `Search::after_ingest`).
pub(super) fn tune(pg: &super::Pg) -> Result<(), crate::error::StoreError> {
    use crate::store::sql::Sql;
    for sql in [
        "ALTER TABLE step_terms ALTER COLUMN terms SET COMPRESSION lz4",
        "ALTER TABLE blobs ALTER COLUMN content SET COMPRESSION lz4",
        "ALTER TABLE outcomes ALTER COLUMN log SET COMPRESSION lz4",
        "ALTER TABLE step_lexemes ALTER COLUMN lexemes SET COMPRESSION lz4",
        "ALTER INDEX step_lexemes_keys SET (gin_pending_list_limit = 65536)",
    ] {
        pg.run("SAVEPOINT tune")?;
        let done = pg.run(sql);
        pg.run(if done.is_ok() { "RELEASE tune" } else { "ROLLBACK TO tune" })?;
        if done.is_err() {
            pg.run("RELEASE tune")?;
        }
    }
    Ok(())
}

/// `trajan_schema.application`: what marks a trajan database.
pub const APPLICATION: &str = "trajan";

pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE trajan_schema (
    application text NOT NULL,
    version     bigint NOT NULL
);

CREATE TABLE sources (
    id          bigserial PRIMARY KEY,
    path        text COLLATE "C" NOT NULL UNIQUE,
    kind        text COLLATE "C" NOT NULL,
    format      text COLLATE "C" NOT NULL,
    size        bigint NOT NULL,
    hash        bytea NOT NULL,
    warnings    text COLLATE "C",
    ingested_at text COLLATE "C" NOT NULL
);

CREATE TABLE blobs (
    id      bigserial PRIMARY KEY,
    hash    bytea NOT NULL UNIQUE,
    role    text COLLATE "C" NOT NULL,
    content text COLLATE "C" NOT NULL,
    extra   text COLLATE "C"
);

CREATE TABLE tasks (
    id           bigserial PRIMARY KEY,
    source_id    bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id  text COLLATE "C" NOT NULL,
    instruction  text COLLATE "C",
    gold_patch   text COLLATE "C",
    fail_to_pass text COLLATE "C",
    pass_to_pass text COLLATE "C"
);
CREATE INDEX tasks_instance ON tasks(instance_id);
CREATE INDEX tasks_source ON tasks(source_id);

CREATE TABLE outcomes (
    id            bigserial PRIMARY KEY,
    source_id     bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id   text COLLATE "C" NOT NULL,
    format        text COLLATE "C" NOT NULL,
    model         text COLLATE "C",
    run_label     text COLLATE "C",
    resolved      bigint,
    patch_applied bigint,
    patch_exists  bigint,
    test_count    bigint NOT NULL,
    log           text COLLATE "C",
    patch         text COLLATE "C",
    logged        text COLLATE "C"
);
CREATE INDEX outcomes_instance ON outcomes(instance_id);
CREATE INDEX outcomes_source ON outcomes(source_id);

CREATE TABLE tests (
    id         bigserial PRIMARY KEY,
    outcome_id bigint NOT NULL REFERENCES outcomes(id) ON DELETE CASCADE,
    name       text COLLATE "C" NOT NULL,
    grp        text COLLATE "C",
    passed     bigint NOT NULL,
    message    text COLLATE "C"
);
CREATE INDEX tests_outcome ON tests(outcome_id);

CREATE TABLE predictions (
    id          bigserial PRIMARY KEY,
    source_id   bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    instance_id text COLLATE "C" NOT NULL,
    model       text COLLATE "C",
    patch       text COLLATE "C"
);
CREATE INDEX predictions_instance ON predictions(instance_id);
CREATE INDEX predictions_source ON predictions(source_id);

CREATE SEQUENCE runs_id_seq;
CREATE TABLE runs (
    id              bigint PRIMARY KEY,
    source_id       bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    position        bigint NOT NULL,
    instance_id     text COLLATE "C" NOT NULL,
    format          text COLLATE "C" NOT NULL,
    format_version  text COLLATE "C",
    agent           text COLLATE "C",
    model           text COLLATE "C",
    exit_status     text COLLATE "C",
    submission      text COLLATE "C",
    cost            double precision,
    tokens_sent     bigint,
    tokens_received bigint,
    api_calls       bigint,
    attempt         bigint,
    best_attempt    bigint,
    step_count      bigint NOT NULL,
    edit_count      bigint NOT NULL,
    rejected_count  bigint NOT NULL,
    metadata        text COLLATE "C",
    outcome_id      bigint REFERENCES outcomes(id) ON DELETE SET NULL,
    prediction_id   bigint REFERENCES predictions(id) ON DELETE SET NULL
);
CREATE INDEX runs_instance ON runs(instance_id);
CREATE INDEX runs_source ON runs(source_id);
CREATE INDEX runs_outcome ON runs(outcome_id);
CREATE INDEX runs_prediction ON runs(prediction_id);

CREATE TABLE history (
    run_id  bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE ON UPDATE CASCADE,
    pos     bigint NOT NULL,
    blob_id bigint NOT NULL REFERENCES blobs(id),
    PRIMARY KEY (run_id, pos)
);
CREATE INDEX history_blob ON history(blob_id);

CREATE TABLE text_chunks (
    id     bigserial PRIMARY KEY,
    run_id bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE ON UPDATE CASCADE,
    body   bytea NOT NULL
);
-- Already compressed (zstd): stored as it is, and read in pieces (`substring`) without
-- decompressing the value first.
ALTER TABLE text_chunks ALTER COLUMN body SET STORAGE EXTERNAL;
CREATE INDEX text_chunks_run ON text_chunks(run_id);

CREATE TABLE steps (
    id             bigserial PRIMARY KEY,
    run_id         bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE ON UPDATE CASCADE,
    idx            bigint NOT NULL,
    tool           text COLLATE "C",
    flags          bigint NOT NULL,
    obs_chars      bigint NOT NULL,
    action_head    text COLLATE "C" NOT NULL,
    execution_time double precision,
    tokens_in      bigint,
    tokens_out     bigint,
    timestamp      text COLLATE "C",
    open_file      text COLLATE "C",
    working_dir    text COLLATE "C",
    query_keep     bigint,
    UNIQUE (run_id, idx)
);

CREATE TABLE step_texts (
    step_id     bigint PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
    action      text COLLATE "C" NOT NULL,
    thought     text COLLATE "C" NOT NULL,
    observation text COLLATE "C" NOT NULL,
    response    text COLLATE "C",
    args        text COLLATE "C",
    chunk_id    bigint,
    chunk_at    bigint
);

CREATE TABLE query_parts (
    step_id bigint NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    pos     bigint NOT NULL,
    blob_id bigint NOT NULL REFERENCES blobs(id),
    PRIMARY KEY (step_id, pos)
);
CREATE INDEX query_parts_blob ON query_parts(blob_id);

CREATE TABLE edits (
    id         bigserial PRIMARY KEY,
    run_id     bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE ON UPDATE CASCADE,
    step_idx   bigint,
    path       text COLLATE "C" NOT NULL,
    kind       text COLLATE "C" NOT NULL,
    status     text COLLATE "C" NOT NULL,
    old_text   text COLLATE "C",
    new_text   text COLLATE "C",
    diff       text COLLATE "C",
    lint_codes text COLLATE "C",
    certainty  text COLLATE "C",
    command    text COLLATE "C",
    checked_at bigint,
    shown      text COLLATE "C",
    undone_at  bigint,
    hunks      text COLLATE "C",
    partial    bigint,
    chunk_id   bigint,
    chunk_at   bigint
);
CREATE INDEX edits_run ON edits(run_id, step_idx);

-- A step's searchable texts (thought, action, observation, as the reviewer sees them) as the
-- terms SQLite's FTS5 tokenizer makes of them (`store::terms::document`), in pieces of about
-- 1 MB that overlap, so a phrase is found in one piece.
CREATE TABLE step_terms (
    step_id bigint NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    piece   bigint NOT NULL,
    terms   text COLLATE "C" NOT NULL,
    PRIMARY KEY (step_id, piece)
);
CREATE INDEX step_terms_trgm ON step_terms USING gin (terms gin_trgm_ops);

CREATE TABLE signals (
    run_id  bigint PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE ON UPDATE CASCADE,
    version bigint NOT NULL,
    hash    text COLLATE "C" NOT NULL,
    json    text COLLATE "C" NOT NULL
);

CREATE TABLE labels (
    id               bigserial PRIMARY KEY,
    run_id           bigint NOT NULL,
    source           text COLLATE "C" NOT NULL,
    rater            text COLLATE "C" NOT NULL,
    taxonomy         text COLLATE "C" NOT NULL,
    taxonomy_version text COLLATE "C" NOT NULL,
    unclassified     bigint NOT NULL,
    exit_category    text COLLATE "C",
    summary          text COLLATE "C",
    note             text COLLATE "C",
    model            text COLLATE "C",
    input_hash       text COLLATE "C",
    tokens_in        bigint,
    tokens_out       bigint,
    cost             double precision,
    latency_ms       bigint,
    created_at       text COLLATE "C" NOT NULL
);
CREATE INDEX labels_run ON labels(run_id, source, rater, id);

CREATE TABLE label_modes (
    id         bigserial PRIMARY KEY,
    label_id   bigint NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
    mode       text COLLATE "C" NOT NULL,
    assigned   bigint NOT NULL,
    confidence double precision NOT NULL,
    evidence   text COLLATE "C" NOT NULL,
    rationale  text COLLATE "C" NOT NULL
);
CREATE INDEX label_modes_label ON label_modes(label_id);

CREATE TABLE llm_cache (
    model       text COLLATE "C" NOT NULL,
    prompt_hash text COLLATE "C" NOT NULL,
    reply       text COLLATE "C" NOT NULL,
    tokens_in   bigint,
    tokens_out  bigint,
    latency_ms  bigint,
    created_at  text COLLATE "C" NOT NULL,
    PRIMARY KEY (model, prompt_hash)
);

CREATE TABLE classify_errors (
    id         bigserial PRIMARY KEY,
    run_id     bigint NOT NULL,
    source     text COLLATE "C" NOT NULL,
    model      text COLLATE "C",
    error      text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL
);
CREATE INDEX classify_errors_run ON classify_errors(run_id);

CREATE TABLE notes (
    id         bigserial PRIMARY KEY,
    run_id     bigint NOT NULL,
    step_idx   bigint NOT NULL,
    rater      text COLLATE "C" NOT NULL,
    text       text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    UNIQUE (run_id, step_idx, rater)
);
"#,
    // 2: SQLite's migration 7: a run's per-test results may come from another evaluation than
    //    its verdict (a per-instance report beside a run summary, `store::link`). NULL: the
    //    verdict's evaluation gives the tests too.
    r#"
ALTER TABLE runs ADD COLUMN tests_outcome_id bigint REFERENCES outcomes(id) ON DELETE SET NULL;
CREATE INDEX runs_tests_outcome ON runs(tests_outcome_id);
"#,
    // 3: SQLite's migration 8: a label or a note names its run by what identifies the run across
    //    re-ingests, beside its id (`store::identity`): the source's path, the instance, the
    //    RetryAgent attempt, and which of the source's runs with that instance and attempt it is.
    //    When a source is written, the labels and notes of its runs' identities are pointed at
    //    those runs (`sql/identity.rs`). Labels and notes of runs gone before this migration keep
    //    no identity.
    r#"
ALTER TABLE labels ADD COLUMN run_source text COLLATE "C";
ALTER TABLE labels ADD COLUMN run_instance text COLLATE "C";
ALTER TABLE labels ADD COLUMN run_attempt bigint;
ALTER TABLE labels ADD COLUMN run_nth bigint;
ALTER TABLE notes ADD COLUMN run_source text COLLATE "C";
ALTER TABLE notes ADD COLUMN run_instance text COLLATE "C";
ALTER TABLE notes ADD COLUMN run_attempt bigint;
ALTER TABLE notes ADD COLUMN run_nth bigint;
WITH who AS (
    SELECT r.id, s.path, r.instance_id, r.attempt,
           row_number() OVER (PARTITION BY r.source_id, r.instance_id, r.attempt ORDER BY r.position, r.id) - 1 AS nth
    FROM runs r JOIN sources s ON s.id = r.source_id)
UPDATE labels l SET run_source = who.path, run_instance = who.instance_id, run_attempt = who.attempt, run_nth = who.nth
FROM who WHERE who.id = l.run_id;
WITH who AS (
    SELECT r.id, s.path, r.instance_id, r.attempt,
           row_number() OVER (PARTITION BY r.source_id, r.instance_id, r.attempt ORDER BY r.position, r.id) - 1 AS nth
    FROM runs r JOIN sources s ON s.id = r.source_id)
UPDATE notes n SET run_source = who.path, run_instance = who.instance_id, run_attempt = who.attempt, run_nth = who.nth
FROM who WHERE who.id = n.run_id;
CREATE INDEX labels_identity ON labels(run_source, run_instance);
CREATE INDEX notes_identity ON notes(run_source, run_instance);
"#,
    // 4: the trigram index reads each step's distinct terms (`step_words`, one row a step, in
    //    pieces as the terms) instead of its whole terms: the same trigrams (pg_trgm splits a
    //    text into words), a hundredth of the text to extract them from on a write. The whole
    //    terms stay, unindexed, to confirm a phrase's candidates with `LIKE`. Terms are written
    //    on a second connection and commit before their steps (`pg/aside.rs`), so they have no
    //    foreign key to `steps`; a trigger deletes them with their steps.
    r#"
CREATE TABLE step_words (
    step_id bigint NOT NULL,
    piece   bigint NOT NULL,
    words   text COLLATE "C" NOT NULL,
    PRIMARY KEY (step_id, piece)
);
INSERT INTO step_words (step_id, piece, words)
SELECT step_id, 0, ' ' || string_agg(w, ' ' ORDER BY w) || ' '
FROM (SELECT DISTINCT step_id, w FROM step_terms, regexp_split_to_table(terms, '[ \n]+') w WHERE w <> '') d
GROUP BY step_id;
DROP INDEX step_terms_trgm;
CREATE INDEX step_words_trgm ON step_words USING gin (words gin_trgm_ops);
ALTER TABLE step_terms DROP CONSTRAINT step_terms_step_id_fkey;
CREATE FUNCTION trajan_forget_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM step_terms WHERE step_id IN (SELECT id FROM gone);
    DELETE FROM step_words WHERE step_id IN (SELECT id FROM gone);
    RETURN NULL;
END $$;
CREATE TRIGGER steps_forget_terms AFTER DELETE ON steps REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION trajan_forget_terms();
"#,
    // 5: a phrase's steps are found by exact keys instead of trigrams: each step's distinct terms
    //    and pairs of neighbouring terms (` a b`: a phrase of one or two terms is answered by the
    //    index alone, a longer one narrowed to the steps holding all its pairs), each cut to 500
    //    characters, as a `tsvector` (a term's prefix is a prefix match in the index) in rows of
    //    about 512 KB (`pg/term_rows.rs` makes the same rows). The keys are made here from the
    //    stored terms; `step_words` and its trigram index go.
    r#"
CREATE TABLE step_lexemes (
    step_id bigint NOT NULL,
    piece   bigint NOT NULL,
    lexemes tsvector NOT NULL,
    PRIMARY KEY (step_id, piece)
);
INSERT INTO step_lexemes (step_id, piece, lexemes)
WITH tokens AS (
    SELECT t.step_id, w.w, lead(w.w) OVER (PARTITION BY t.step_id, t.piece ORDER BY w.n) AS next
    FROM step_terms t, regexp_split_to_table(t.terms, ' ') WITH ORDINALITY w(w, n)
), keys AS (
    SELECT DISTINCT step_id, left(w, 500) COLLATE "C" AS k FROM tokens WHERE w NOT IN ('', E'\n')
    UNION
    SELECT step_id, left(' ' || w || ' ' || next, 500) COLLATE "C" FROM tokens
    WHERE w NOT IN ('', E'\n') AND next NOT IN ('', E'\n')
), numbered AS (
    SELECT step_id, k, sum(octet_length(k) + 1) OVER (PARTITION BY step_id ORDER BY k) / 524288 AS piece FROM keys
)
SELECT step_id, piece, array_to_tsvector(array_agg(k)) FROM numbered GROUP BY step_id, piece;
CREATE INDEX step_lexemes_keys ON step_lexemes USING gin (lexemes);
CREATE INDEX step_lexemes_split ON step_lexemes (step_id) WHERE piece > 0;
DROP TABLE step_words;
CREATE OR REPLACE FUNCTION trajan_forget_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM step_terms WHERE step_id IN (SELECT id FROM gone);
    DELETE FROM step_lexemes WHERE step_id IN (SELECT id FROM gone);
    RETURN NULL;
END $$;
"#,
    // 6: SQLite's migration 9: onset and blame beside a label's modes (the judgement as JSON,
    //    the onset step and the blame value copied out for the statistics' filters).
    r#"
ALTER TABLE labels ADD COLUMN judgement text;
ALTER TABLE labels ADD COLUMN onset_step bigint;
ALTER TABLE labels ADD COLUMN blame text COLLATE "C";
"#,
    // 7: SQLite's migration 10: what a step without an action says, for the step list.
    r#"
ALTER TABLE steps ADD COLUMN says text;
"#,
];
