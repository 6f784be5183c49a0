-- The round trip alone: what PostgreSQL, pgbench and the loopback allow with no work.
SELECT 1;
