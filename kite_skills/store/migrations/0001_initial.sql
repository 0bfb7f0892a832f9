-- 0001: skills, their audit log, and full-text search over live text.
-- Applied inside one BEGIN IMMEDIATE transaction together with its schema_version row.

CREATE TABLE skills (
    id                   INTEGER PRIMARY KEY,
    name                 TEXT NOT NULL UNIQUE,
    description          TEXT NOT NULL,
    body                 TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('draft', 'live', 'archived')),
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    -- first activation by a person; NULL until then; nothing an agent can call sets it
    published_at         TEXT,
    -- a pending revision proposed by an agent for an existing skill
    proposed_description TEXT,
    proposed_body        TEXT,
    proposed_at          TEXT,
    proposed_by          TEXT,
    -- a live skill was put into service by a person at least once
    CHECK (status <> 'live' OR published_at IS NOT NULL),
    CHECK ((proposed_body IS NULL) = (proposed_description IS NULL)),
    CHECK ((proposed_body IS NULL) = (proposed_at IS NULL))
);

CREATE INDEX skills_status_name ON skills (status, name);

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    skill       TEXT NOT NULL,   -- a name, not a key: the history outlives a deleted skill
    action      TEXT NOT NULL,
    from_status TEXT,
    to_status   TEXT,
    via         TEXT NOT NULL CHECK (via IN ('mcp', 'dashboard', 'cli')),
    who         TEXT NOT NULL,
    detail      TEXT NOT NULL DEFAULT ''
);

CREATE INDEX audit_log_skill ON audit_log (skill, id);

CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, description, body,
    content = 'skills', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER skills_fts_insert AFTER INSERT ON skills BEGIN
    INSERT INTO skills_fts (rowid, name, description, body)
    VALUES (new.id, new.name, new.description, new.body);
END;

CREATE TRIGGER skills_fts_delete AFTER DELETE ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, body)
    VALUES ('delete', old.id, old.name, old.description, old.body);
END;

CREATE TRIGGER skills_fts_update AFTER UPDATE OF name, description, body ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, body)
    VALUES ('delete', old.id, old.name, old.description, old.body);
    INSERT INTO skills_fts (rowid, name, description, body)
    VALUES (new.id, new.name, new.description, new.body);
END;
