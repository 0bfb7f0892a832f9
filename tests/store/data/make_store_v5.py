"""How tests/store/data/store-v5.db was made: run with kite-skills at schema version 5 (main
before issue 22 §5) on PYTHONPATH, e.g. `PYTHONPATH=/path/to/old/checkout python make_store_v5.py
store-v5.db`. Kept so the fixture can be made again; the test reads the file, not this."""

import sqlite3
import sys

from kite_skills.store import LATEST_VERSION, Store, agent, human

assert LATEST_VERSION == 5
path = sys.argv[1]
with Store.open(path) as s:
    agent.save(
        s,
        "compare-funds",
        "When comparing two funds",
        "# Steps\n\n1. Open.\n2. Compare.\n",
        who="claude-ai 0.1",
    )
    human.publish(s, "compare-funds", rev=s.get("compare-funds").revision, via="cli", who="alice")
    agent.save(
        s,
        "compare-funds",
        "When comparing two or more funds",
        "# Steps\n\n1. Open each.\n2. Compare.\n",
        who="claude-ai 0.1",
    )
    agent.save(
        s, "agent-draft", "A draft an agent wrote", "# Draft\n\nnot live\n", who="cursor 1.2"
    )
    human.create(
        s,
        "person-live",
        description="Written by a person",
        body="# Mine\n\nline\n",
        via="dashboard",
        who="alice",
    )
    human.publish(s, "person-live", rev=s.get("person-live").revision, via="dashboard", who="alice")
    human.edit(
        s,
        "person-live",
        rev=s.get("person-live").revision,
        body="# Mine\n\nline two\n",
        via="cli",
        who="alice",
    )
    human.import_skills(s, [("old-archived", "Archived one", "# Old\n")], via="cli", who="alice")
    human.archive(s, "old-archived", via="cli", who="alice")
    agent.save(s, "rejected-one", "First", "# one\n", who="claude-ai 0.1")
    human.publish(s, "rejected-one", rev=s.get("rejected-one").revision, via="cli", who="alice")
    agent.save(s, "rejected-one", "Second", "# two\n", who="claude-ai 0.1")
    human.reject_revision(s, "rejected-one", via="cli", who="alice")
conn = sqlite3.connect(path)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("PRAGMA journal_mode=DELETE")
conn.execute("VACUUM")
conn.close()
