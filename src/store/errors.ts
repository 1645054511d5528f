// A database URL without its password, and a PostgreSQL connection error said in one line with what to do.

/** `postgres://user:***@host:port/db`, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** Turn a connection failure into one line that says what to do. */
export function postgresError(err: unknown, databaseUrl: string): Error {
  const e = err as { code?: string; message?: string };
  const where = redactUrl(databaseUrl);
  const hint = 'check DATABASE_URL, or unset it to use the embedded PostgreSQL (`agentrun dev`)';
  let msg: string;
  switch (e.code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      msg = `cannot reach PostgreSQL at ${where} (${e.code}): is it running? ${hint}`;
      break;
    case '28P01':
    case '28000':
      msg = `PostgreSQL at ${where} refused the credentials (${e.message}): ${hint}`;
      break;
    case '3D000':
      msg = `PostgreSQL at ${where}: ${e.message}; create it (createdb) or ${hint}`;
      break;
    default:
      if (/timeout/i.test(e.message ?? '')) msg = `cannot reach PostgreSQL at ${where} (connection timeout): ${hint}`;
      else return new Error(`PostgreSQL at ${where}: ${e.message ?? String(err)}`, { cause: err });
  }
  return new Error(msg, { cause: err });
}

/** PostgreSQL codes of a server going away or not yet back: admin/crash shutdown, cannot connect now, and connection exceptions (class 08). */
const CONNECTION_LOST = /^(57P0[123]|08\d{3}|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/;

/** Whether a query failed because the connection to PostgreSQL was lost or could not be made (a restart), not because of the query. */
export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && CONNECTION_LOST.test(e.code)) return true;
  return typeof e?.message === 'string' && /^Connection terminated|connection timeout|terminating connection/i.test(e.message);
}
