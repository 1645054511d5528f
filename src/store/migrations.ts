// Versioned schema migrations, applied automatically by Store.connect.
// Append new entries; never edit one that has shipped (a database records the versions it ran).
import type pg from 'pg';
import { log } from '../log.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE conversations (
  id          text PRIMARY KEY,
  task        text NOT NULL,
  workspace   text NOT NULL,
  model       text NOT NULL,
  config      jsonb NOT NULL DEFAULT '{}'::jsonb,
  schedule_id text,
  status      text NOT NULL DEFAULT 'running',
  reason      text,
  turns       integer NOT NULL DEFAULT 0,
  usage       jsonb NOT NULL DEFAULT '{"promptTokens":0,"completionTokens":0,"totalTokens":0}'::jsonb,
  cost_usd    double precision NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX conversations_created_idx ON conversations (created_at DESC);
CREATE INDEX conversations_status_idx ON conversations (status, created_at DESC);

-- The transcript (DESIGN principle 2): content lives here, the workflow keeps only seq references.
CREATE TABLE messages (
  conversation_id text NOT NULL,
  seq          integer NOT NULL,
  turn         integer NOT NULL,
  role         text NOT NULL,
  kind         text NOT NULL,
  content      text NOT NULL,
  reasoning    text,
  tool_calls   jsonb,
  tool_call_id text,
  tool_name    text,
  tokens       integer NOT NULL,
  meta         jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, seq)
);

-- Continuation segments of one assistant message (finish_reason "length" → continue).
CREATE TABLE segments (
  conversation_id text NOT NULL,
  seq           integer NOT NULL,
  segment       integer NOT NULL,
  content       text NOT NULL,
  reasoning     text,
  tool_calls    jsonb,
  finish_reason text NOT NULL,
  usage         jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, seq, segment)
);

-- Parsed tool calls; their arguments can be large, so they stay out of Temporal history.
CREATE TABLE tool_calls (
  conversation_id text NOT NULL,
  call_id   text NOT NULL,
  seq       integer NOT NULL,
  position  integer NOT NULL,
  native_id text,
  name      text NOT NULL,
  args      jsonb NOT NULL,
  PRIMARY KEY (conversation_id, call_id)
);
CREATE INDEX tool_calls_seq_idx ON tool_calls (conversation_id, seq);

-- The live stream (DESIGN principle 5). id is the offset watchers resume from.
CREATE TABLE stream (
  id              bigserial PRIMARY KEY,
  conversation_id text NOT NULL,
  event           jsonb NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stream_conversation_idx ON stream (conversation_id, id);

-- Tool-call ledger (DESIGN principle 3): a re-run finds the recorded result or the intent of a write.
CREATE TABLE ledger (
  conversation_id text NOT NULL,
  call_id     text NOT NULL,
  tool        text NOT NULL,
  args_hash   text NOT NULL,
  state       text NOT NULL CHECK (state IN ('started', 'done')),
  intent      jsonb,
  result      jsonb,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (conversation_id, call_id)
);

-- What prepareContext decided for a turn; callModel renders the request from it.
CREATE TABLE contexts (
  conversation_id text NOT NULL,
  turn          integer NOT NULL,
  plan          jsonb NOT NULL,
  prompt_tokens integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, turn)
);

CREATE TABLE summaries (
  conversation_id text NOT NULL,
  through_seq integer NOT NULL,
  content     text NOT NULL,
  tokens      integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, through_seq)
);

-- Audit trail of pruning: one row per pass of the pipeline in a turn.
CREATE TABLE prune_records (
  conversation_id text NOT NULL,
  turn          integer NOT NULL,
  pass          integer NOT NULL,
  tokens_before integer NOT NULL,
  tokens_after  integer NOT NULL,
  actions       jsonb NOT NULL,
  plan          jsonb,
  at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, turn, pass)
);

-- Message ids the model marked for deletion (conversation_message_ids_write).
CREATE TABLE marked_ids (
  conversation_id text PRIMARY KEY,
  ids        text[] NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE checkpoints (
  conversation_id text NOT NULL,
  turn   integer NOT NULL,
  commit text NOT NULL,
  files  text[] NOT NULL,
  at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, turn)
);

-- One row per model call attempt, so failed-but-billed attempts are visible in inspect.
CREATE TABLE usage (
  conversation_id text NOT NULL,
  purpose  text NOT NULL,
  seq      integer NOT NULL,
  segment  integer NOT NULL,
  attempt  integer NOT NULL,
  turn     integer NOT NULL,
  model    text NOT NULL,
  usage    jsonb NOT NULL,
  cost_usd double precision NOT NULL,
  at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, purpose, seq, segment, attempt)
);
`,
  },
  {
    version: 2,
    name: 'stream event keys',
    // A retried activity writes the same events again; the key makes the second write a no-op.
    // Model output is keyed seq:attempt:segment:index, other events by what they are about.
    sql: `
ALTER TABLE stream ADD COLUMN event_key text;
CREATE UNIQUE INDEX stream_event_key_idx ON stream (conversation_id, event_key) WHERE event_key IS NOT NULL;
`,
  },
  {
    version: 3,
    name: 'checkpoint bundles and workspace usage',
    // Off-host checkpoints of local workspaces: one git bundle per checkpoint commit, incremental
    // against the one before (prerequisite); applied in id order they rebuild the workspace's repository.
    sql: `
CREATE TABLE checkpoint_bundles (
  id              bigserial PRIMARY KEY,
  conversation_id text NOT NULL,
  turn            integer NOT NULL,
  commit          text NOT NULL,
  prerequisite    text,
  bundle          bytea NOT NULL,
  bytes           integer NOT NULL,
  at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (conversation_id, commit)
);
-- Where each conversation's workspace is and what it takes on disk, for list and the web page.
CREATE TABLE workspace_usage (
  conversation_id text PRIMARY KEY,
  host            text NOT NULL,
  workspace       text NOT NULL,
  disk_bytes      bigint,
  at              timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 4,
    name: 'network connections',
    // Every connection a command asked the egress proxy for (src/environment/proxy.ts), allowed or refused.
    sql: `
CREATE TABLE network_connections (
  id              bigserial PRIMARY KEY,
  conversation_id text NOT NULL,
  call_id         text,
  host            text NOT NULL,
  port            integer NOT NULL,
  address         text,
  method          text NOT NULL,
  allowed         boolean NOT NULL,
  reason          text,
  bytes_up        bigint NOT NULL DEFAULT 0,
  bytes_down      bigint NOT NULL DEFAULT 0,
  duration_ms     integer NOT NULL DEFAULT 0,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX network_connections_conversation_idx ON network_connections (conversation_id, id);
`,
  },
  {
    version: 5,
    name: 'placement fences',
    // Each placement of a conversation's workspace raises its epoch; host writes carrying an older one are refused (src/store/fence.ts).
    sql: `
CREATE TABLE fence (
  conversation_id text PRIMARY KEY,
  epoch           bigint NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 6,
    name: 'bundle bases',
    // A local repository's first tree, bundled once and shared by the first bundle of every
    // conversation on it (issue 21 point 7, src/workspace/offhost.ts). In parts: one value stays
    // far below bytea's 1 GB and what the driver can send. `parts` 0: above the cap, not stored.
    sql: `
CREATE TABLE bundle_bases (
  commit          text PRIMARY KEY,
  bytes           bigint NOT NULL,
  parts           integer NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE bundle_base_parts (
  commit          text NOT NULL,
  part            integer NOT NULL,
  data            bytea NOT NULL,
  at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (commit, part)
);
ALTER TABLE checkpoint_bundles ADD COLUMN base text;
`,
  },
  {
    version: 7,
    name: 'provider pools',
    // Fleet-wide provider pools (src/model/pool.ts): a count of leases, not a queue of calls. A
    // lease lapses at expires_at unless its worker renews it, so a killed worker's slots come back.
    // agentrun_pool_acquire takes the pool's advisory lock and then decides in statements that each
    // see what the lock's previous holder committed (a CTE would share one snapshot taken before the lock).
    sql: `
CREATE TABLE pools (
  pool              text PRIMARY KEY,
  concurrency       integer CHECK (concurrency >= 0),
  rpm               integer CHECK (rpm >= 0),
  adaptive_limit    double precision NOT NULL DEFAULT 4,
  last_decrease_at  timestamptz,
  paused_until      timestamptz,
  paused_by         text,
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE pool_leases (
  lease_id     text PRIMARY KEY,
  pool         text NOT NULL,
  worker_id    text NOT NULL,
  tenant       text NOT NULL,
  priority     integer NOT NULL,
  acquired_at  timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX pool_leases_pool_idx ON pool_leases (pool, expires_at);
CREATE TABLE pool_waiters (
  waiter_id    text PRIMARY KEY,
  pool         text NOT NULL,
  tenant       text NOT NULL,
  priority     integer NOT NULL,
  since        timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX pool_waiters_pool_idx ON pool_waiters (pool, expires_at);
CREATE TABLE pool_events (
  pool  text NOT NULL,
  kind  text NOT NULL,
  at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pool_events_idx ON pool_events (pool, kind, at);
CREATE TABLE tenant_weights (
  tenant  text PRIMARY KEY,
  weight  double precision NOT NULL CHECK (weight > 0)
);

CREATE FUNCTION agentrun_pool_acquire(p_pool text, p_waiter text, p_lease text, p_worker text, p_tenant text, p_priority integer, p_lease_ms integer)
RETURNS TABLE (granted boolean, wait_until timestamptz, pool_limit double precision, held bigint, why text)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  p pools%ROWTYPE;
  lim double precision;
  n_held bigint;
  n_calls bigint;
  ahead bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('agentrun.pool:' || p_pool, 0));
  SELECT * INTO p FROM pools WHERE pools.pool = p_pool;
  IF NOT FOUND THEN
    INSERT INTO pools (pool) VALUES (p_pool) ON CONFLICT DO NOTHING;
    SELECT * INTO p FROM pools WHERE pools.pool = p_pool;
  END IF;
  lim := coalesce(p.concurrency::double precision, floor(p.adaptive_limit));
  SELECT count(*) INTO n_held FROM pool_leases l WHERE l.pool = p_pool AND l.expires_at > now();
  -- The fast path: a free slot and nobody else in line: granted without joining the line.
  IF (p.paused_until IS NULL OR p.paused_until <= now()) AND n_held < lim AND p.rpm IS NULL
     AND NOT EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = p_pool AND w.expires_at > now() AND w.waiter_id <> p_waiter) THEN
    DELETE FROM pool_waiters WHERE waiter_id = p_waiter;
    INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at)
      VALUES (p_lease, p_pool, p_worker, p_tenant, p_priority, now() + make_interval(secs => p_lease_ms / 1000.0));
    INSERT INTO pool_events (pool, kind) VALUES (p_pool, 'call');
    RETURN QUERY SELECT true, NULL::timestamptz, lim, n_held + 1, 'granted'::text;
    RETURN;
  END IF;
  INSERT INTO pool_waiters (waiter_id, pool, tenant, priority, expires_at)
    VALUES (p_waiter, p_pool, p_tenant, p_priority, now() + interval '10 seconds')
    ON CONFLICT (waiter_id) DO UPDATE SET expires_at = excluded.expires_at, priority = excluded.priority;
  IF p.paused_until IS NOT NULL AND p.paused_until > now() THEN
    RETURN QUERY SELECT false, p.paused_until, lim, n_held, coalesce(p.paused_by, 'paused');
    RETURN;
  END IF;
  IF n_held >= lim THEN
    RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'full'::text;
    RETURN;
  END IF;
  IF p.rpm IS NOT NULL THEN
    SELECT count(*) INTO n_calls FROM pool_events e WHERE e.pool = p_pool AND e.kind = 'call' AND e.at > now() - interval '1 minute';
    IF n_calls >= p.rpm THEN
      RETURN QUERY SELECT false,
        (SELECT min(e.at) + interval '1 minute' FROM pool_events e WHERE e.pool = p_pool AND e.kind = 'call' AND e.at > now() - interval '1 minute'),
        lim, n_held, 'rpm'::text;
      RETURN;
    END IF;
  END IF;
  -- Free slots go to the waiters first in line: by priority, then the tenant holding the fewest
  -- streams for its weight, then the longest waiting.
  SELECT count(*) INTO ahead FROM (
    SELECT w.waiter_id, w.priority, w.since,
      (SELECT count(*) FROM pool_leases l WHERE l.pool = p_pool AND l.tenant = w.tenant AND l.expires_at > now())
        / coalesce((SELECT t.weight FROM tenant_weights t WHERE t.tenant = w.tenant), 1.0) AS share
    FROM pool_waiters w WHERE w.pool = p_pool AND w.expires_at > now()
  ) q, (
    SELECT (SELECT count(*) FROM pool_leases l WHERE l.pool = p_pool AND l.tenant = p_tenant AND l.expires_at > now())
        / coalesce((SELECT t.weight FROM tenant_weights t WHERE t.tenant = p_tenant), 1.0) AS share,
      (SELECT since FROM pool_waiters WHERE waiter_id = p_waiter) AS since
  ) me
  WHERE q.waiter_id <> p_waiter AND (q.priority, q.share, q.since) < (p_priority, me.share, me.since);
  IF ahead >= lim - n_held THEN
    RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'queued'::text;
    RETURN;
  END IF;
  DELETE FROM pool_waiters WHERE waiter_id = p_waiter;
  IF random() < 0.05 THEN
    DELETE FROM pool_waiters WHERE pool_waiters.pool = p_pool AND pool_waiters.expires_at < now() - interval '1 minute';
    DELETE FROM pool_leases WHERE pool_leases.pool = p_pool AND pool_leases.expires_at < now() - interval '1 minute';
  END IF;
  INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at)
    VALUES (p_lease, p_pool, p_worker, p_tenant, p_priority, now() + make_interval(secs => p_lease_ms / 1000.0));
  INSERT INTO pool_events (pool, kind) VALUES (p_pool, 'call');
  -- Keeps an hour: enough for rpm (a minute) and pool show (ten minutes); pruned now and then.
  IF random() < 0.01 THEN
    DELETE FROM pool_events e WHERE e.pool = p_pool AND e.at < now() - interval '1 hour';
    DELETE FROM pool_leases WHERE pool_leases.pool = p_pool AND pool_leases.expires_at < now() - interval '1 minute';
  END IF;
  RETURN QUERY SELECT true, NULL::timestamptz, lim, n_held + 1, 'granted'::text;
END
$fn$;
`,
  },
  {
    version: 8,
    name: 'budget pools',
    // One budget shared by many conversations (a batch's --budget, src/model/budget-pool.ts): each
    // model call reserves its worst case before it is made and settles its cost after. A
    // reservation is keyed by its call's attempt, so a retried activity never reserves twice.
    sql: `
CREATE TABLE budget_pools (
  pool            text PRIMARY KEY,
  limit_usd       double precision NOT NULL,
  reserved_usd    double precision NOT NULL DEFAULT 0,
  spent_usd       double precision NOT NULL DEFAULT 0,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE budget_reservations (
  pool            text NOT NULL,
  conversation_id text NOT NULL,
  seq             integer NOT NULL,
  segment         integer NOT NULL,
  attempt         text NOT NULL,
  reserved_usd    double precision NOT NULL,
  spent_usd       double precision,
  at              timestamptz NOT NULL DEFAULT now(),
  settled_at      timestamptz,
  PRIMARY KEY (pool, conversation_id, seq, segment, attempt)
);
CREATE INDEX budget_reservations_open_idx ON budget_reservations (pool, at) WHERE settled_at IS NULL;
CREATE TABLE budget_pool_raises (
  pool            text NOT NULL,
  raise_id        text NOT NULL,
  add_usd         double precision NOT NULL,
  at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pool, raise_id)
);
`,
  },
  {
    version: 9,
    name: 'repository extensions',
    // A conversation's repository extensions as read once from its starting tree
    // (src/extensions/repository.ts), and the setup plan its first setup ran (setup after a move runs it again);
    // the hooks' decisions on a call, made when it was parsed.
    sql: `
CREATE TABLE repository_extensions (
  conversation_id text PRIMARY KEY,
  snapshot        jsonb NOT NULL,
  setup_plan      jsonb,
  at              timestamptz NOT NULL DEFAULT now()
);
-- What the PreToolUse hooks decided as a call was parsed (they run before the workflow's policy).
ALTER TABLE tool_calls ADD COLUMN hooks jsonb;
`,
  },
  {
    version: 10,
    name: 'approvals and garbage collection records',
    // Who decided each call that waited for approval, kept with the conversation (the stream that
    // also tells it is removed by gc); what gc removed of a conversation and when.
    sql: `
CREATE TABLE approvals (
  conversation_id text NOT NULL,
  call_id         text NOT NULL,
  approved        boolean NOT NULL,
  decided_by      text,
  reason          text,
  timed_out       boolean NOT NULL DEFAULT false,
  at              timestamptz NOT NULL,
  PRIMARY KEY (conversation_id, call_id)
);
ALTER TABLE conversations ADD COLUMN collected jsonb;
`,
  },
  {
    version: 11,
    name: 'epochs of connection records and bundle bases',
    // The placement each connection record and bundle-base part was written under
    // (src/store/fence.ts): a part is never replaced by a write of an older placement of the same
    // conversation, and a record says which host's command made the connection. Null: written
    // before this migration, or by a step that carries no epoch.
    sql: `
ALTER TABLE network_connections ADD COLUMN epoch bigint;
ALTER TABLE bundle_base_parts ADD COLUMN conversation_id text, ADD COLUMN epoch bigint;
ALTER TABLE bundle_bases ADD COLUMN conversation_id text, ADD COLUMN epoch bigint;
`,
  },
  {
    version: 13,
    name: 'provider pool slots',
    // Each lease holds one of its pool's numbered slots (0 … limit-1, unique per pool), so a call
    // that finds a free slot and nobody in line takes it in one statement without the pool's lock
    // (agentrun_pool_fast, src/model/pool.ts): two callers that pick the same slot collide on the
    // unique index and the loser takes the locked path. The locked path (agentrun_pool_acquire)
    // takes slots too. A lease without a slot (granted before this migration) or above the limit
    // (the limit was lowered) sends every call to the locked path, which counts leases.
    sql: `
ALTER TABLE pool_leases ADD COLUMN slot integer;
CREATE UNIQUE INDEX pool_leases_slot_idx ON pool_leases (pool, slot);
-- A tenant's requests per minute across every pool (agentrun tenant rpm set): its calls are counted
-- from pool_events, which now name the tenant.
CREATE TABLE tenant_limits (
  tenant  text PRIMARY KEY,
  rpm     integer NOT NULL CHECK (rpm > 0)
);
ALTER TABLE pool_events ADD COLUMN tenant text;
CREATE INDEX pool_events_tenant_idx ON pool_events (tenant, at) WHERE kind = 'call';

-- A free slot below the limit, taken (an expired lease on it is replaced); NULL when none is free.
CREATE FUNCTION agentrun_pool_take_slot(p_pool text, p_limit double precision, p_lease text, p_worker text, p_tenant text, p_priority integer, p_lease_ms integer)
RETURNS integer LANGUAGE sql VOLATILE AS $fn$
  WITH free AS (
    SELECT s FROM generate_series(0, least(greatest(1, p_limit)::integer,
      (SELECT count(*) FROM pool_leases l WHERE l.pool = p_pool AND l.expires_at > now())::integer + 8) - 1) s
    WHERE NOT EXISTS (SELECT 1 FROM pool_leases l WHERE l.pool = p_pool AND l.slot = s AND l.expires_at > now())
    ORDER BY random() LIMIT 1
  )
  INSERT INTO pool_leases (lease_id, pool, worker_id, tenant, priority, expires_at, slot)
    SELECT p_lease, p_pool, p_worker, p_tenant, p_priority, now() + make_interval(secs => p_lease_ms / 1000.0), s FROM free
  ON CONFLICT (pool, slot) DO UPDATE SET lease_id = excluded.lease_id, worker_id = excluded.worker_id, tenant = excluded.tenant,
    priority = excluded.priority, acquired_at = now(), expires_at = excluded.expires_at
    WHERE pool_leases.expires_at <= now()
  RETURNING slot
$fn$;

CREATE OR REPLACE FUNCTION agentrun_pool_acquire(p_pool text, p_waiter text, p_lease text, p_worker text, p_tenant text, p_priority integer, p_lease_ms integer)
RETURNS TABLE (granted boolean, wait_until timestamptz, pool_limit double precision, held bigint, why text)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  p pools%ROWTYPE;
  lim double precision;
  n_held bigint;
  n_calls bigint;
  ahead bigint;
  v_slot integer;
  t_rpm integer;
  t_calls bigint;
  t_first timestamptz;
BEGIN
  -- Soft state: its commit need not wait for the WAL flush (src/model/pool.ts, ASYNC_COMMIT).
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('agentrun.pool:' || p_pool, 0));
  SELECT * INTO p FROM pools WHERE pools.pool = p_pool;
  IF NOT FOUND THEN
    INSERT INTO pools (pool) VALUES (p_pool) ON CONFLICT DO NOTHING;
    SELECT * INTO p FROM pools WHERE pools.pool = p_pool;
  END IF;
  lim := coalesce(p.concurrency::double precision, floor(p.adaptive_limit));
  SELECT count(*) INTO n_held FROM pool_leases l WHERE l.pool = p_pool AND l.expires_at > now();
  -- A tenant over its requests per minute waits out of line: it holds up no other tenant's calls.
  SELECT t.rpm INTO t_rpm FROM tenant_limits t WHERE t.tenant = p_tenant;
  IF t_rpm IS NOT NULL THEN
    SELECT count(*), min(e.at) INTO t_calls, t_first FROM pool_events e
      WHERE e.kind = 'call' AND e.tenant = p_tenant AND e.at > now() - interval '1 minute';
    IF t_calls >= t_rpm THEN
      DELETE FROM pool_waiters WHERE waiter_id = p_waiter;
      RETURN QUERY SELECT false, t_first + interval '1 minute', lim, n_held, 'tenant rpm'::text;
      RETURN;
    END IF;
  END IF;
  -- The fast path: a free slot and nobody else in line: granted without joining the line.
  IF (p.paused_until IS NULL OR p.paused_until <= now()) AND n_held < lim AND p.rpm IS NULL
     AND NOT EXISTS (SELECT 1 FROM pool_waiters w WHERE w.pool = p_pool AND w.expires_at > now() AND w.waiter_id <> p_waiter) THEN
    DELETE FROM pool_waiters WHERE waiter_id = p_waiter;
    v_slot := agentrun_pool_take_slot(p_pool, lim, p_lease, p_worker, p_tenant, p_priority, p_lease_ms);
    IF v_slot IS NULL THEN
      -- A fast path (no lock) took the last free slot meanwhile.
      RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'full'::text;
      RETURN;
    END IF;
    INSERT INTO pool_events (pool, kind, tenant) VALUES (p_pool, 'call', p_tenant);
    RETURN QUERY SELECT true, NULL::timestamptz, lim, n_held + 1, 'granted'::text;
    RETURN;
  END IF;
  INSERT INTO pool_waiters (waiter_id, pool, tenant, priority, expires_at)
    VALUES (p_waiter, p_pool, p_tenant, p_priority, now() + interval '10 seconds')
    ON CONFLICT (waiter_id) DO UPDATE SET expires_at = excluded.expires_at, priority = excluded.priority;
  IF p.paused_until IS NOT NULL AND p.paused_until > now() THEN
    RETURN QUERY SELECT false, p.paused_until, lim, n_held, coalesce(p.paused_by, 'paused');
    RETURN;
  END IF;
  IF n_held >= lim THEN
    RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'full'::text;
    RETURN;
  END IF;
  IF p.rpm IS NOT NULL THEN
    SELECT count(*) INTO n_calls FROM pool_events e WHERE e.pool = p_pool AND e.kind = 'call' AND e.at > now() - interval '1 minute';
    IF n_calls >= p.rpm THEN
      RETURN QUERY SELECT false,
        (SELECT min(e.at) + interval '1 minute' FROM pool_events e WHERE e.pool = p_pool AND e.kind = 'call' AND e.at > now() - interval '1 minute'),
        lim, n_held, 'rpm'::text;
      RETURN;
    END IF;
  END IF;
  -- Free slots go to the waiters first in line: by priority, then the tenant holding the fewest
  -- streams for its weight, then the longest waiting.
  SELECT count(*) INTO ahead FROM (
    SELECT w.waiter_id, w.priority, w.since,
      (SELECT count(*) FROM pool_leases l WHERE l.pool = p_pool AND l.tenant = w.tenant AND l.expires_at > now())
        / coalesce((SELECT t.weight FROM tenant_weights t WHERE t.tenant = w.tenant), 1.0) AS share
    FROM pool_waiters w WHERE w.pool = p_pool AND w.expires_at > now()
  ) q, (
    SELECT (SELECT count(*) FROM pool_leases l WHERE l.pool = p_pool AND l.tenant = p_tenant AND l.expires_at > now())
        / coalesce((SELECT t.weight FROM tenant_weights t WHERE t.tenant = p_tenant), 1.0) AS share,
      (SELECT since FROM pool_waiters WHERE waiter_id = p_waiter) AS since
  ) me
  WHERE q.waiter_id <> p_waiter AND (q.priority, q.share, q.since) < (p_priority, me.share, me.since);
  IF ahead >= lim - n_held THEN
    RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'queued'::text;
    RETURN;
  END IF;
  DELETE FROM pool_waiters WHERE waiter_id = p_waiter;
  IF random() < 0.05 THEN
    DELETE FROM pool_waiters WHERE pool_waiters.pool = p_pool AND pool_waiters.expires_at < now() - interval '1 minute';
    DELETE FROM pool_leases WHERE pool_leases.pool = p_pool AND pool_leases.expires_at < now() - interval '1 minute';
  END IF;
  v_slot := agentrun_pool_take_slot(p_pool, lim, p_lease, p_worker, p_tenant, p_priority, p_lease_ms);
  IF v_slot IS NULL THEN
    -- A fast path (no lock) took the last free slot meanwhile.
    RETURN QUERY SELECT false, NULL::timestamptz, lim, n_held, 'full'::text;
    RETURN;
  END IF;
  INSERT INTO pool_events (pool, kind, tenant) VALUES (p_pool, 'call', p_tenant);
  -- Keeps an hour: enough for rpm (a minute) and pool show (ten minutes); pruned now and then.
  IF random() < 0.01 THEN
    DELETE FROM pool_events e WHERE e.pool = p_pool AND e.at < now() - interval '1 hour';
    DELETE FROM pool_leases WHERE pool_leases.pool = p_pool AND pool_leases.expires_at < now() - interval '1 minute';
  END IF;
  RETURN QUERY SELECT true, NULL::timestamptz, lim, n_held + 1, 'granted'::text;
END
$fn$;
`,
  },
  {
    version: 14,
    name: 'stream text retention',
    // Model output in the stream is pruned a day after it was written (the transcript keeps the
    // answers): a block-range index on the insert time finds the old rows without an index entry
    // per row, since rows are appended in time order.
    sql: `
CREATE INDEX stream_at_brin_idx ON stream USING brin (at);
`,
  },
  {
    version: 15,
    name: 'eval sets, cases and runs',
    // A golden set of frozen cases (src/store/evals.ts): each holds everything its run needs and
    // nothing of the conversation it came from, so gc and the source's removal leave it whole. The
    // columns name the source `source_id`, never `conversation_id`: deleting a conversation removes
    // rows of every table with that column, and a case must outlive its source.
    sql: `
CREATE TABLE eval_cases (
  set_name    text NOT NULL,
  case_id     text NOT NULL,
  source_id   text NOT NULL,
  frozen      jsonb NOT NULL,
  messages    jsonb NOT NULL,
  bundle      bytea,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (set_name, case_id)
);
CREATE TABLE eval_runs (
  run_id      text PRIMARY KEY,
  set_name    text NOT NULL,
  mode        text NOT NULL,
  options     jsonb NOT NULL,
  report      jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX eval_runs_set_idx ON eval_runs (set_name, created_at DESC);
`,
  },
  {
    version: 16,
    name: 'conversation replacements',
    // `--replace` deletes a finished conversation's rows and starts another under its id: who did it,
    // of which tenant, and what the old one was. Not a conversation_id column: deleting a conversation's
    // rows (Store.deleteConversation) leaves these.
    sql: `
CREATE TABLE conversation_replacements (
  replaced_id     text NOT NULL,
  replaced_at     timestamptz NOT NULL DEFAULT now(),
  tenant          text NOT NULL,
  old_status      text,
  old_task        text,
  replaced_by     text NOT NULL
);
CREATE INDEX conversation_replacements_id_idx ON conversation_replacements (replaced_id, replaced_at);
`,
  },
];

/** Quote an identifier we already validated (see Store.connect). */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Apply the missing migrations in one transaction. The advisory lock (per schema) makes concurrent
 * workers wait for each other instead of racing on CREATE TABLE; the loser then sees the versions
 * the winner recorded and applies nothing.
 */
export async function migrate(client: pg.ClientBase, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agentrun.migrate:${schema}`]);
    // Checked first: CREATE SCHEMA IF NOT EXISTS still demands CREATE on the database, which a
    // least-privilege role given an existing schema does not have.
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (rowCount === 0) await client.query(`CREATE SCHEMA ${ident(schema)}`);
    await client.query(`SET LOCAL search_path TO ${ident(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS agentrun_schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number; name: string }>('SELECT version, name FROM agentrun_schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    // A version recorded under another name was made by a build with other migrations (a branch that
    // numbered its own): applying the rest on top would fail later with an unrelated SQL error.
    const ours = new Map(migrations.map((m) => [m.version, m.name]));
    const clashes = rows.filter((r) => ours.has(r.version) && ours.get(r.version) !== r.name);
    if (clashes.length > 0) {
      const list = clashes.map((r) => `${r.version} is '${r.name}' there, '${ours.get(r.version)}' here`).join('; ');
      throw new Error(
        `schema "${schema}" was migrated by a different agentrun build (migration ${list}): use another schema or database (AGENTRUN_DB_SCHEMA / DATABASE_URL), or drop this one if it holds nothing to keep`,
      );
    }
    const known = new Set(migrations.map((m) => m.version));
    const newer = [...done].filter((v) => !known.has(v));
    if (newer.length > 0) {
      // A newer agentrun migrated this database; migrations are additive, so keep going.
      log.warn({ schema, versions: newer }, 'database has schema migrations this agentrun does not know; upgrade agentrun');
    }
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO agentrun_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return applied;
}
