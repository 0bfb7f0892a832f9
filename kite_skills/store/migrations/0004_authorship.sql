-- 0004: who wrote each text, and which revision each action wrote (issue 23).
-- skills.written_via/written_by: who wrote the current text ('mcp' = an agent; 'cli' or
-- 'dashboard' = a person). An agent's save replaces only a never-published draft an agent
-- wrote; over a person's draft it is a proposed revision. Filled here from the audit log: the
-- newest row that wrote the text (an accepted revision was written by the agent that proposed
-- it; its detail reads 'revision proposed by WHO at <27-character time>'). A skill with no
-- such row keeps NULL: its author is unknown, and agents treat it as a person's.
-- audit_log.revision: the revision id of the text the action wrote, so the CLI can tell when
-- a revision prefix matches more than one text a skill has held. NULL on older rows.

ALTER TABLE skills ADD COLUMN written_via TEXT
    CHECK (written_via IS NULL OR written_via IN ('mcp', 'dashboard', 'cli'));
ALTER TABLE skills ADD COLUMN written_by TEXT;
ALTER TABLE audit_log ADD COLUMN revision TEXT;

UPDATE skills SET (written_via, written_by) = (
    SELECT
        CASE WHEN a.action = 'accept' THEN 'mcp' ELSE a.via END,
        CASE
            WHEN a.action <> 'accept' THEN a.who
            WHEN a.detail LIKE 'revision proposed by % at %' AND length(a.detail) > 52
                THEN substr(a.detail, 22, length(a.detail) - 52)
            ELSE 'unknown'
        END
    FROM audit_log AS a
    WHERE a.skill = skills.name
      AND a.action IN ('create', 'save_draft', 'edit', 'import', 'accept')
    ORDER BY a.id DESC
    LIMIT 1
);
