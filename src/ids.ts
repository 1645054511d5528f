// The one check of every identifier a caller chooses (conversation ids, batch and schedule names,
// host ids, branch and ref names) and the one way an identifier becomes a file name. The CLI, the
// SDK and the worker's first step of a conversation all ask these functions, so a name refused in
// one is refused in all. No Node APIs: the workflow's deterministic leaves may use them too.

/**
 * An id is also a directory name under the workspaces directory and a part of git ref names
 * (`refs/agentrun/<id>/turn-N`): letters, digits, `.`, `_` and `-`, plus `:` in the start time
 * Temporal appends to a scheduled run's id (`nightly-2026-11-23T02:00:00Z`). A file or ref name
 * writes that `:` as `_`, so `_` may not stand where a time's `:` would: no two ids share a
 * directory or a ref.
 */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const SCHEDULED_TIME = /T\d\d:\d\d:\d\dZ/g;
const TIME_WRITTEN_AS_FILE_NAME = /T\d\d_\d\d[_:]\d\dZ|T\d\d[_:]\d\d_\d\dZ/;
/** A conversation id: room for the suffixes a batch (`-N`), a schedule (`-<time>`) and sub-agents (`.sub-N`) add below a file name's 255 bytes. */
const CONVERSATION_ID_MAX = 240;
/** A batch or schedule name: the conversation ids made from it stay under CONVERSATION_ID_MAX. */
const NAME_MAX = 160;
/** A host id is a task queue's name part and a DNS label (a StatefulSet pod name). */
const HOST_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/;
const BRANCH_MAX = 200;

export type IdKind = 'conversation id' | 'batch name' | 'schedule name';

/** A refused identifier: bad input, one line, never retried. */
export class IdentifierError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdentifierError';
  }
}

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/** Why `value` cannot be a `kind`, or undefined when it can. */
export function idRefusal(kind: IdKind, value: string): string | undefined {
  const max = kind === 'conversation id' ? CONVERSATION_ID_MAX : NAME_MAX;
  const rule = `a ${kind} is 1-${max} letters, digits, '.', '_' or '-', starting with a letter or digit, without '..' and not ending in '.' or '.lock'`;
  if (typeof value !== 'string' || value.length === 0) return `empty ${kind}: ${rule}`;
  if (value.length > max) return `${kind} ${shown(value)} is ${value.length} characters long: ${rule}`;
  if (!ID_PATTERN.test(value) || value.includes('..') || value.endsWith('.') || value.endsWith('.lock')) return `${kind} ${shown(value)} is refused: ${rule}`;
  if (value.replace(SCHEDULED_TIME, '').includes(':') || TIME_WRITTEN_AS_FILE_NAME.test(value))
    return `${kind} ${shown(value)} is refused: ':' stands only in a scheduled run's time (THH:MM:SSZ), and '_' never where that time's ':' would`;
  return undefined;
}

/** `value` as a `kind`, or an IdentifierError with its one line. */
export function checkId(kind: IdKind, value: string): string {
  const refused = idRefusal(kind, value);
  if (refused) throw new IdentifierError(refused);
  return value;
}

/** Why `value` cannot be a host id (AGENTRUN_HOST_ID, else the host name), or undefined. */
export function hostIdRefusal(value: string): string | undefined {
  if (HOST_ID_PATTERN.test(value) && !value.includes('..')) return undefined;
  return `host id ${shown(value)} is refused: a host id is 1-63 letters, digits, '.' or '-', starting with a letter or digit (set AGENTRUN_HOST_ID)`;
}

/**
 * Why `name` is not a branch (or, `what` = 'ref', a branch, tag or commit) git would accept, by the
 * rules of `git check-ref-format --branch`, or undefined. Checked without running git, so the CLI,
 * the SDK and the worker's first step refuse the same names before any turn runs.
 */
export function refNameRefusal(name: string, what: 'branch' | 'ref' = 'branch'): string | undefined {
  const bad = (why: string) => `${what} ${shown(name)} is not a valid git ${what === 'branch' ? 'branch name' : 'branch, tag or commit'}: ${why}`;
  if (typeof name !== 'string' || name.length === 0) return bad('it is empty');
  if (name.length > BRANCH_MAX) return bad(`it is longer than ${BRANCH_MAX} characters`);
  if (name.startsWith('-')) return bad("it starts with '-'");
  if (name === '@' || name.includes('@{')) return bad("it is '@' or holds '@{'");
  // Control characters, space and the characters git gives a meaning in revisions and globs.
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return bad('it holds a space, a control character or one of ~ ^ : ? * [ \\');
  if (name.includes('..')) return bad("it holds '..'");
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return bad("it starts or ends with '/' or holds '//'");
  if (name.endsWith('.')) return bad("it ends with '.'");
  for (const part of name.split('/')) if (part.startsWith('.') || part.endsWith('.lock')) return bad("a part starts with '.' or ends with '.lock'");
  return undefined;
}

/** A result-branch template (`nightly/{{date}}/{{id}}`): its placeholders stand for safe parts (routing.ts expands them). */
export function branchTemplateRefusal(template: string): string | undefined {
  const sample = template.replaceAll('{{date}}', '2026-01-01').replaceAll('{{id}}', 'conversation');
  const refused = refNameRefusal(sample);
  return refused && refused.replace(shown(sample), shown(template));
}

/** The identifiers of a run's options, as the worker's first step checks them (the CLI's schema checks the same). */
export function runIdentifiersRefusal(config: { ref?: string; branch?: string; scheduleId?: string; tenant?: string }): string | undefined {
  return (
    (config.tenant !== undefined ? tenantRefusal(config.tenant) : undefined) ??
    (config.ref !== undefined ? refNameRefusal(config.ref, 'ref') : undefined) ??
    (config.branch !== undefined ? branchTemplateRefusal(config.branch) : undefined) ??
    (config.scheduleId !== undefined ? idRefusal('schedule name', config.scheduleId) : undefined)
  );
}

/**
 * A tenant is Temporal's fairness key (at most 64 bytes), a search attribute and a key of caches and
 * operator bindings; it never becomes a path. The alphabet adds `:` and `@` to an id's (team names,
 * e-mail-like owners), and refuses `..` as ids do.
 */
const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
const TENANT_RULE = "a tenant is 1-64 letters, digits, '.', '_', ':', '@' or '-', starting with a letter or digit, without '..'";

/** Why `value` cannot be a tenant, or undefined when it can. */
export function tenantRefusal(value: string): string | undefined {
  if (typeof value === 'string' && TENANT_PATTERN.test(value) && !value.includes('..')) return undefined;
  return `tenant ${shown(String(value))} is refused: ${TENANT_RULE}`;
}

/** `value` as a tenant, or an IdentifierError with its one line. */
export function checkTenant(value: string): string {
  const refused = tenantRefusal(value);
  if (refused) throw new IdentifierError(refused);
  return value;
}

/** An id as a file or ref name part: `:` (a scheduled run's time) becomes `_`; nothing else of a valid id changes, and no two valid ids meet. */
export function fileNameOf(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * `dir/<name>`, proven a direct child of `dir` before anyone removes or clones into it: `name` is
 * not empty, `.` or `..`, and holds no `/` or NUL. `dir` must be absolute.
 */
export function childPath(dir: string, name: string): string {
  if (!dir.startsWith('/')) throw new IdentifierError(`${shown(dir)} is not an absolute directory`);
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new IdentifierError(`${shown(name)} is not a name inside ${dir}: refused before anything there is removed or written`);
  return `${dir.replace(/\/+$/, '') || ''}/${name}`;
}
