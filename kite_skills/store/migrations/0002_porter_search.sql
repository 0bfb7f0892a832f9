-- 0002: search that finds what a person means. Words are stemmed (porter over unicode61), so
-- "funds" finds "fund" and "comparison" finds "compare". The index is rebuilt in place from the
-- skills table: no skill row changes, and the triggers from 0001 keep it current (they name the
-- table, which is recreated under the same name).

DROP TABLE skills_fts;

CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, description, body,
    content = 'skills', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO skills_fts (skills_fts) VALUES ('rebuild');
