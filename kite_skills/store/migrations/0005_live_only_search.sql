-- 0005: the search index holds live skills only. Drafts (which agents write) and archived
-- skills are not in it, so they never change what a search finds: not the candidates (each
-- word's bounded set of newest skills, see store/_search.py) and not the ranking (bm25's
-- document frequencies and average lengths). 520 drafts saying a person's words used to fill
-- those candidate sets and hide the person's live skill.
--
-- The index reads its text through a view of the live rows (so 'rebuild' and the
-- 'integrity-check' command see exactly what is indexed). The triggers add a row when it is
-- live, and take it out before it changes or stops being live. Skill rows are untouched.

DROP TRIGGER skills_fts_insert;
DROP TRIGGER skills_fts_delete;
DROP TRIGGER skills_fts_update;
DROP TABLE skills_fts;

CREATE VIEW skills_live_text AS
    SELECT id, name, description, body FROM skills WHERE status = 'live';

CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, description, body,
    content = 'skills_live_text', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER skills_fts_insert AFTER INSERT ON skills WHEN new.status = 'live' BEGIN
    INSERT INTO skills_fts (rowid, name, description, body)
    VALUES (new.id, new.name, new.description, new.body);
END;

CREATE TRIGGER skills_fts_delete AFTER DELETE ON skills WHEN old.status = 'live' BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, body)
    VALUES ('delete', old.id, old.name, old.description, old.body);
END;

CREATE TRIGGER skills_fts_update AFTER UPDATE OF name, description, body, status ON skills
BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, description, body)
    SELECT 'delete', old.id, old.name, old.description, old.body WHERE old.status = 'live';
    INSERT INTO skills_fts (rowid, name, description, body)
    SELECT new.id, new.name, new.description, new.body WHERE new.status = 'live';
END;

INSERT INTO skills_fts (skills_fts) VALUES ('rebuild');
