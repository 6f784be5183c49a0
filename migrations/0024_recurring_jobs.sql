-- Recurring jobs: background work that runs every so often rather than because a write
-- caused it (the pruners: `changes.prune`, `upkeep.prune`; see JobKind.everySeconds).
-- Such a job is one row that lives for ever: each run, once done, puts it back in the
-- queue, due one interval later (JobQueue.record), and every instance's runner puts it
-- there if it is missing (first start, a dev reset that emptied the table). Whichever
-- instance claims it runs it; a runner that died gives it back when its lease ends.
--
--   recurring    the row is its kind's one recurring job
--
-- At most one pending (queued or running) job per recurring kind, whatever the number of
-- instances that insert it at once: the insert is ON CONFLICT DO NOTHING on this index.
ALTER TABLE jobs ADD COLUMN recurring boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX jobs_one_recurring_idx ON jobs (kind) WHERE recurring AND state <> 'dead';
