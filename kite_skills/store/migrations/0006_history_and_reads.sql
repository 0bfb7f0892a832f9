-- 0006: the review loop remembers (issue 22 §5).
--
-- skill_texts: every text a skill has had, kept when it is replaced. kind 'text' rows are the
-- skill's own texts (drafts, edits, imports, accepted revisions, restores), with the status
-- the skill had when the text was written and live_at set once the text served as live;
-- kind 'proposal' rows are agents' proposed revisions, with their outcome (pending, accepted,
-- rejected, replaced), who decided and, for a rejection, the person's reason. Like the audit
-- log, rows name a skill, not a key: the history outlives a deleted skill. Filled here with
-- each skill's current text and pending proposal (older texts were never kept).
--
-- read_receipts: when each live skill or catalog recipe was last read, and by which client;
-- one row per (item, client), bounded by the writer. settings: a person's switches
-- ('read_receipts' = 'off' stops recording).

CREATE TABLE skill_texts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    skill       TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('text', 'proposal')),
    action      TEXT NOT NULL,   -- the audit action that wrote it ('migrated' for rows from 0006)
    status      TEXT NOT NULL,   -- text: draft/live/archived; proposal: its outcome
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    at          TEXT NOT NULL,
    via         TEXT NOT NULL,   -- '' when nobody knows who wrote it
    who         TEXT NOT NULL,
    live_at     TEXT,
    decided_at  TEXT,
    decided_via TEXT,
    decided_by  TEXT,
    reason      TEXT,
    CHECK (kind = 'text' OR status IN ('pending', 'accepted', 'rejected', 'replaced'))
);

CREATE INDEX skill_texts_skill ON skill_texts (skill, kind, id);

INSERT INTO skill_texts (skill, kind, action, status, description, body, at, via, who, live_at)
    SELECT name, 'text', 'migrated', status, description, body, updated_at,
           COALESCE(written_via, ''), COALESCE(written_by, ''),
           CASE WHEN status = 'live' THEN updated_at END
    FROM skills ORDER BY id;

INSERT INTO skill_texts (skill, kind, action, status, description, body, at, via, who)
    SELECT name, 'proposal', 'migrated', 'pending', proposed_description, proposed_body,
           proposed_at, 'mcp', COALESCE(proposed_by, '')
    FROM skills WHERE proposed_body IS NOT NULL ORDER BY id;

CREATE TABLE read_receipts (
    kind   TEXT NOT NULL CHECK (kind IN ('skill', 'recipe')),
    item   TEXT NOT NULL,
    client TEXT NOT NULL,
    via    TEXT NOT NULL,
    at     TEXT NOT NULL,
    PRIMARY KEY (kind, item, client)
) WITHOUT ROWID;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
