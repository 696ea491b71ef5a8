-- Monthly requests and tokens per route (PostgreSQL), the numbers of
-- `offload report --month YYYY-MM` (section "route").
--
-- Parameter: ${month}, a calendar month 'YYYY-MM' in UTC. It is written in
-- Grafana's variable syntax, so in Grafana:
--   1. Dashboard settings > Variables > New: name `month`, type "Query" on the
--      PostgreSQL data source with
--        SELECT to_char(m, 'YYYY-MM') FROM generate_series(
--          date_trunc('month', now() - interval '12 months'), now(), interval '1 month') m
--        ORDER BY 1 DESC
--      (or type "Text box" with a default such as 2026-11).
--   2. Panel > Query > Code, paste this file, Format: Table.
-- From a shell:
--   sed "s/\${month}/2026-11/" deploy/sql/monthly_report.sql | psql "$DATABASE_URL"
--
-- Rows that were never served (route NULL) appear as 'unrouted', as in the
-- report. `cached_tokens` (read from the prompt cache) and `cache_write_tokens`
-- (written to it) are parts of `prompt_tokens`; total = prompt + completion.
-- `uncounted_prompt_tokens` are the prompt tokens of rows with no cached count
-- (cached_tokens NULL: vLLM without --enable-prompt-tokens-details), which the
-- report values at the full input price (docs/report.md).
-- Shadow runs (shadow_of) and `offload gate` runs (gate_run) are evidence, not
-- traffic: left out, as the report leaves them out.
WITH bounds AS (
    SELECT CAST('${month}' || '-01 00:00:00+00' AS timestamptz) AS month_start,
           CAST('${month}' || '-01 00:00:00+00' AS timestamptz) + interval '1 month' AS month_end
)
SELECT
    COALESCE(u.route, 'unrouted') AS route,
    COUNT(*) AS requests,
    COALESCE(SUM(u.prompt_tokens), 0) AS prompt_tokens,
    COALESCE(SUM(u.completion_tokens), 0) AS completion_tokens,
    COALESCE(SUM(u.cached_tokens), 0) AS cached_tokens,
    COALESCE(SUM(u.cache_write_tokens), 0) AS cache_write_tokens,
    COALESCE(SUM(CASE WHEN u.cached_tokens IS NULL THEN u.prompt_tokens ELSE 0 END), 0) AS uncounted_prompt_tokens,
    COALESCE(SUM(u.prompt_tokens + u.completion_tokens), 0) AS total_tokens
FROM usage AS u, bounds AS b
WHERE u.started_at >= b.month_start
  AND u.started_at < b.month_end
  AND u.shadow_of IS NULL
  AND u.gate_run IS NULL
GROUP BY 1
ORDER BY 1;
