// Crash gates: stop a worker inside a chosen step by making one of its store writes wait.
// A trigger on a store table (in the test's own schema) blocks the matching write on an
// advisory lock the test holds; the test sees the backend waiting, kills the worker (SIGKILL),
// ends the orphaned backend and opens the gate. Every firing is logged with the database's
// clock, so a bench can tell when the step ran again on another worker.
import pg from 'pg';

export interface GateSpec {
  /** Unique within the schema. */
  name: string;
  table: 'messages' | 'checkpoints' | 'conversations' | 'stream' | 'ledger';
  event: 'INSERT' | 'UPDATE';
  /** Trigger WHEN condition over NEW (and OLD for updates). */
  when: string;
}

export interface CrashGates {
  /** Create the trigger; armed gates block the matching write until `open`. */
  add(spec: GateSpec, armed?: boolean): Promise<void>;
  /** Wait until a backend is blocked in the gate; its pid. */
  waitBlocked(name: string, timeoutMs?: number): Promise<number>;
  /** Disarm, end the blocked backend (its worker is gone) and let writes through. */
  open(name: string, blockedPid?: number): Promise<void>;
  /** Database times (ms) of the gate's committed firings after `sinceMs`. */
  hits(name: string, sinceMs: number): Promise<number[]>;
  close(): Promise<void>;
}

const LOCK_CLASS = 4242;

export async function crashGates(databaseUrl: string, schema: string): Promise<CrashGates> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const s = `"${schema}"`;
  await admin.query(`
    CREATE TABLE IF NOT EXISTS ${s}.crash_gates (name text PRIMARY KEY, armed boolean NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.crash_gate_hits (name text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL);
    CREATE OR REPLACE FUNCTION ${s}.crash_gate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.crash_gate_hits VALUES (TG_ARGV[0], pg_backend_pid(), clock_timestamp());
      IF EXISTS (SELECT 1 FROM ${s}.crash_gates WHERE name = TG_ARGV[0] AND armed) THEN
        PERFORM pg_advisory_xact_lock_shared(${LOCK_CLASS}, hashtext('${schema}/' || TG_ARGV[0]));
      END IF;
      RETURN NEW;
    END $$;`);
  const key = (name: string): unknown[] => [LOCK_CLASS, `${schema}/${name}`];
  return {
    async add(spec, armed = true) {
      if (armed) await admin.query('SELECT pg_advisory_lock($1, hashtext($2))', key(spec.name));
      await admin.query(`INSERT INTO ${s}.crash_gates VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET armed = $2`, [spec.name, armed]);
      await admin.query(
        `CREATE TRIGGER "gate_${spec.name}" BEFORE ${spec.event} ON ${s}.${spec.table} FOR EACH ROW WHEN (${spec.when}) EXECUTE FUNCTION ${s}.crash_gate('${spec.name}')`,
      );
    },
    async waitBlocked(name, timeoutMs = 90_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await admin.query(
          `SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND NOT l.granted AND l.classid = $1 AND l.objsubid = 2 AND l.objid = (hashtext($2)::bigint & 4294967295)::oid`,
          key(name),
        );
        if (r.rows[0]) return r.rows[0].pid as number;
        if (Date.now() > end) throw new Error(`no write reached the crash gate ${name} in time`);
        await new Promise((res) => setTimeout(res, 25));
      }
    },
    async open(name, blockedPid) {
      await admin.query(`UPDATE ${s}.crash_gates SET armed = false WHERE name = $1`, [name]);
      // PostgreSQL does not notice that a waiting backend's client died; end it like a lost connection.
      if (blockedPid !== undefined) await admin.query('SELECT pg_terminate_backend($1)', [blockedPid]);
      await admin.query('SELECT pg_advisory_unlock($1, hashtext($2))', key(name));
    },
    async hits(name, sinceMs) {
      const r = await admin.query(
        `SELECT (extract(epoch FROM at) * 1000)::float8 AS ms FROM ${s}.crash_gate_hits WHERE name = $1 AND at > to_timestamp($2 / 1000.0) ORDER BY at`,
        [name, sinceMs],
      );
      return r.rows.map((row) => row.ms as number);
    },
    async close() {
      await admin.end();
    },
  };
}
