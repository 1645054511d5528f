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
    const { rows } = await client.query<{ version: number }>('SELECT version FROM agentrun_schema_migrations');
    const done = new Set(rows.map((r) => r.version));
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
