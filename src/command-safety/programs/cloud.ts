// Clients of remote infrastructure: cloud CLIs, infrastructure as code, clusters. They act with the
// credentials of whoever runs them on machines, buckets and clusters outside the sandbox. Each CLI is
// read by its own grammar (where its global options end, where the service or group ends, which word
// is the operation), and its operation is one of three kinds: it reads names and state, it reads a
// secret (a secret's value, a token, a kubeconfig: a read that hands over credentials), or it changes
// something there (or the client's own credentials and settings, or opens a session or a port). What
// a CLI does not know as a read is a change.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, danger, onlyAsksAbout, operands, type Rule, type RuleTable, type State, word } from '../state.js';
import { isCredentialName } from '../secrets.js';
import { judgeUnknownProgram } from './unknown.js';

type Kind = 'read' | 'secret' | 'change';
/** What one invocation does: its kind, and the words that name the operation in the reason. */
interface Reading {
  kind: Kind;
  what: string;
}
const read: Reading = { kind: 'read', what: '' };
const change = (what: string): Reading => ({ kind: 'change', what });
const secret = (what: string): Reading => ({ kind: 'secret', what });

const text = (ws: Word[]) => ws.map((w) => w.text);
/** The value of an option, given as `--opt VALUE` or `--opt=VALUE`. */
function optionValue(args: Word[], names: RegExp): string | undefined {
  for (let k = 0; k < args.length; k++) {
    const t = args[k]!.text;
    const eq = t.indexOf('=');
    if (eq > 0 && names.test(t.slice(0, eq))) return t.slice(eq + 1);
    if (names.test(t)) return args[k + 1]?.text ?? '';
  }
  return undefined;
}
const has = (args: Word[], names: RegExp) => args.some((a) => names.test(a.text.replace(/=.*/, '')));

const BUCKET = /^(s3|gs):\/\//;

/**
 * A copy between a bucket and this machine, judged by its direction: a download is a write where it
 * lands (the workspace, a temporary directory, or outside); an upload, or a copy between buckets,
 * changes the bucket; a move from a bucket deletes there.
 */
function transfer(verb: string, files: Word[], st: State, cli: string): Reading {
  const [from, to] = files;
  if (!from || !to) return change(`${cli} ${verb}`);
  if (BUCKET.test(to.text)) return change(`${cli} ${verb} to ${to.text}`);
  if (!BUCKET.test(from.text)) return change(`${cli} ${verb}`);
  if (/^mv$/.test(verb)) return change(`${cli} mv from ${from.text}`);
  if (to.text !== '-') checkWriteTarget(to, st, `${cli} ${verb} downloads to`);
  return read;
}

// ---- aws: `aws [global options] SERVICE OPERATION [options]` ----

const AWS_GLOBAL_VALUED = /^--(profile|region|output|endpoint-url|query|color|ca-bundle|cli-read-timeout|cli-connect-timeout|cli-binary-format)$/;
const S3_VALUED =
  /^--(profile|region|output|endpoint-url|query|color|ca-bundle|exclude|include|acl|storage-class|sse|sse-kms-key-id|sse-c|sse-c-key|content-type|cache-control|expires|metadata|metadata-directive|grants|source-region|page-size|expected-size|website-redirect|content-disposition|content-encoding|content-language|request-payer|checksum-algorithm|expires-in)$/;
/** Operations named as reads that read no secret: describe-, list-, get-, head-, and a few whose verb only looks. */
const AWS_READ = /^(describe|list|get|head|batch-get|search|lookup|filter|simulate|validate|estimate|decode)-|^(wait|tail|help|scan|query)$/;
/** A get- whose name says it hands over a secret or a credential (get-secret-value, get-login-password, get-session-token). */
const AWS_SECRET_NAME = /^(batch-)?get-(?![\w-]*report$)([\w-]*-)?(secret-value|login-password|password-data|[\w-]*token|credentials?[\w-]*)$/;
/** Reads that return a secret or a credential, by service, beyond those names. */
const AWS_SECRET_OPERATIONS: Readonly<Record<string, (op: string, args: Word[]) => boolean>> = {
  ssm: (op, args) => /^get-parameter(s|s-by-path|-history)?$/.test(op) && has(args, /^--with-decryption$/),
  // User data (an instance's or a launch template's) often carries the secrets a machine boots with.
  ec2: (op, args) =>
    (op === 'describe-instance-attribute' && /^userdata$/i.test(optionValue(args, /^--attribute$/) ?? '')) || op === 'describe-launch-template-versions',
  lambda: (op) => op === 'get-function',
  // A build project's environment variables are where its secrets are kept.
  codebuild: (op) => op === 'batch-get-projects',
  apigateway: (op, args) => /^get-api-keys?$/.test(op) && has(args, /^--include-values?$/),
  appsync: (op) => op === 'list-api-keys',
  kms: (op) => /^(decrypt|generate-data-key(-pair)?)$/.test(op),
  sts: (op) => /^assume-role/.test(op),
  configure: (op) => op === 'export-credentials',
};

/** An endpoint on this machine's loopback: a local emulator (MinIO, LocalStack), not the user's cloud. */
const LOOPBACK_ENDPOINT = /^https?:\/\/(localhost|127(\.\d+){3}|\[::1\])(:\d+)?(\/|$)/;

function readAws(args: Word[], st: State): Reading {
  if (LOOPBACK_ENDPOINT.test(optionValue(args, /^--endpoint-url$/) ?? '')) return read;
  const ops = operands(args, AWS_GLOBAL_VALUED);
  const [service, op] = [ops[0]?.text ?? '', ops[1]?.text ?? ''];
  if (!service || /^(help|--version)$/.test(service) || op === 'help') return read;
  // Unsigned, the client reaches buckets as anyone on the internet does: whose bucket it lists, whose
  // policy and ACLs it reads, is named by nothing but the bucket, as one surveys a stranger's storage.
  if (/^s3(api)?$/.test(service) && has(args, /^--no-sign-request$/)) {
    danger(st, `reads a bucket anonymously, as one probes another's storage (aws ${service} ${op} --no-sign-request)`);
    return read;
  }
  const rest = args.slice(args.indexOf(ops[1] ?? ops[0]!) + 1);
  if (AWS_SECRET_OPERATIONS[service]?.(op, rest) || AWS_SECRET_NAME.test(op)) return secret(`aws ${service} ${op}`);
  if (service === 's3') {
    if (op === 'ls') return read;
    // A presigned URL hands the object to whoever holds the link, for up to a week, without the keys.
    if (op === 'presign') return change('aws s3 presign, a link that shares the object');
    if (/^(cp|sync|mv)$/.test(op)) return transfer(op, operands(rest, S3_VALUED), st, 'aws s3');
    return change(`aws s3 ${op}`);
  }
  if (service === 'configure') return /^(list|list-profiles|get)$/.test(op) ? read : change(`aws configure${op ? ` ${op}` : ''}`);
  if (!op) return read;
  return AWS_READ.test(op) ? read : change(`aws ${service} ${op}`);
}

// ---- gcloud: `gcloud [global flags] [alpha|beta] GROUP… COMMAND [positionals] [flags]` ----

const GCLOUD_VALUED =
  /^--(project|account|configuration|format|verbosity|impersonate-service-account|billing-project|flags-file|region|zone|location|filter|limit|page-size|sort-by|secret|member|role|instance|cluster|service-account|key-file|iam-account|image|source|platform|runtime|tag|config|data|metadata|scopes|network|subnet|keyring|key)$/;
const GCLOUD_READ =
  /^(list|describe|get-[\w-]+|list-[\w-]+|describe-[\w-]+|show-[\w-]+|read|tail|search[\w-]*|lookup|check[\w-]*|validate[\w-]*|explain|test-iam-permissions|get-iam-policy|wait|help|version|info)$/;
/** Commands that hand over a secret or a credential. */
const GCLOUD_SECRET = /^(access|print-access-token|print-identity-token|print-refresh-token|get-credentials)$/;

function readGcloud(prog: string, args: Word[], st: State): Reading {
  const ops = text(operands(args, GCLOUD_VALUED)).filter((o) => !/^(alpha|beta|preview)$/.test(o));
  if (ops.length === 0 || /^(version|info|help|topic|cheat-sheet)$/.test(ops[0]!)) return read;
  if (ops[0] === 'storage' && /^(cp|rsync|mv)$/.test(ops[1] ?? '')) {
    const files = operands(args.slice(args.findIndex((a) => a.text === ops[1]) + 1), GCLOUD_VALUED);
    return transfer(ops[1]!, files, st, `${prog} storage`);
  }
  // The first operand is a group (compute, run, secrets, config, auth…) or a command of the top level (init).
  if (ops.length === 1) return /^(init|components|survey|feedback)$/.test(ops[0]!) ? change(`${prog} ${ops[0]}`) : read;
  // A Cloud Source repository cloned lands in the workspace, as a git clone does.
  if (ops[0] === 'source' && ops[1] === 'repos' && ops[2] === 'clone') return read;
  // An emulator runs here, for tests; it serves the network only when bound to every interface.
  if (ops[0] === 'emulators') {
    const host = optionValue(args, /^--host-port$/) ?? '';
    return /^(0\.0\.0\.0|\[?::\]?)(:|$)/.test(host) ? change(`${prog} emulators listening on ${host}`) : read;
  }
  for (const [k, o] of ops.entries()) {
    if (k === 0) continue;
    if (GCLOUD_SECRET.test(o) && (o !== 'access' || ops[k - 1] === 'versions')) return secret(`${prog} ${ops.slice(0, k + 1).join(' ')}`);
    if (o === 'get-credentials') return secret(`${prog} ${ops.slice(0, k + 1).join(' ')}`);
    if (GCLOUD_READ.test(o)) return read;
    // A word of the group's vocabulary that is not a read: the command, and a change.
    // A plural noun followed by a read is a group the vocabulary above does not list (`compute vpn-tunnels list`).
    if (/^[a-z]+(-[a-z]+)*s$/.test(o) && GCLOUD_READ.test(ops[k + 1] ?? '')) continue;
    if (/^[a-z]+(-[a-z]+)*$/.test(o) && !GCLOUD_GROUP_WORD.test(o)) return change(`${prog} ${ops.slice(0, k + 1).join(' ')}`);
  }
  return read;
}
/** Words gcloud uses for groups below the top (`compute instances`, `secrets versions`, `iam service-accounts keys`). */
const GCLOUD_GROUP_WORD =
  /^(instances|instance-groups|instance-templates|disks|snapshots|images|firewall-rules|networks|subnets|addresses|routers|regions|zones|machine-types|project-info|os-login|ssh-keys|services|revisions|jobs|executions|domain-mappings|versions|secrets|keys|service-accounts|roles|policies|workload-identity-pools|clusters|node-pools|operations|buckets|objects|users|databases|backups|sinks|logs|metrics|repositories|packages|tags|docker|triggers|builds|functions|topics|subscriptions|keyrings|application-default|configurations|deployments|resources|manifests|types|organizations|folders|projects|billing|accounts|iam|compute|run|container|sql|storage|logging|artifacts|pubsub|kms|auth|config|app|deployment-manager|firestore|datastore|spanner|bigtable|dataproc|dataflow|composer|scheduler|tasks|eventarc|workflows|secrets-manager|emulators|source|dns|record-sets|managed-zones|endpoints|api-gateway|certificate-manager|beta|alpha|identity|groups|memberships|members)$/;

// ---- gsutil: `gsutil [-m] [-o OPT] [-h HEADER] COMMAND args` ----

const GSUTIL_READ = /^(ls|cat|du|stat|hash|version|help)$/;
const GSUTIL_SUBREAD =
  /^(iam|acl|defacl|versioning|lifecycle|cors|label|logging|web|retention|ubla|pap|rpo|autoclass|defstorageclass|kms|requesterpays|bucketpolicyonly)$/;

function readGsutil(args: Word[], st: State): Reading {
  const ops = operands(args, /^-[ohpuU]$/);
  const cmd = ops[0]?.text ?? '';
  if (!cmd || GSUTIL_READ.test(cmd)) return read;
  if (/^(cp|rsync|mv)$/.test(cmd)) return transfer(cmd, operands(args.slice(args.indexOf(ops[0]!) + 1), /^-[xjzaDpx]$/), st, 'gsutil');
  if (GSUTIL_SUBREAD.test(cmd) && /^(get|list)$/.test(ops[1]?.text ?? '')) return read;
  return change(`gsutil ${text(ops.slice(0, 2)).join(' ')}`);
}

// ---- az: `az GROUP… COMMAND [--options]` ----

const AZ_READ = /^(list|show|get-[\w-]+|list-[\w-]+|show-[\w-]+|what-if|validate|tail|wait|exists|check-[\w-]+|version|help)$/;
/**
 * Reads whose words say they hand over a secret: a resource's keys (`storage account keys list`,
 * `functionapp keys list`, `redis list-keys`), credentials (`acr credential show`), an app's settings
 * and connection strings (where its secrets live), publishing profiles (deployment passwords).
 */
const AZ_SECRET =
  /\b(keys? (list|show)|list-keys|credentials? (show|list)|list-credentials|appsettings list|connection-string (list|show)|show-connection-string|list-connection-strings|list-publishing-(profiles|credentials)|get-publishing-profile|admin-key show|query-key list)$/;
/**
 * Commands that only compile or check files here (Bicep's build, lint and format), and the CLI's own
 * extensions, installed into the user's ~/.azure as helm's plugins go into its directory.
 */
const AZ_LOCAL =
  /^(bicep (build|build-params|lint|format|decompile|decompile-params|generate-params|version|list-versions)|extension (add|update|remove|list|show|list-available))$/;

function readAz(args: Word[]): Reading {
  // The command's path comes first, its options after it.
  const end = args.findIndex((a) => a.text.startsWith('-'));
  const ops = text(end < 0 ? args : args.slice(0, end));
  if (ops.length === 0 || /^(version|find|help)$/.test(ops[0]!)) return read;
  const words = ops.join(' ');
  if (/^(keyvault (secret|key|certificate) (show|download|backup)|account get-access-token|aks get-credentials)\b/.test(words)) return secret(`az ${words}`);
  if (AZ_SECRET.test(words)) return secret(`az ${words}`);
  if (AZ_LOCAL.test(words)) return read;
  if (ops.length === 1) return change(`az ${ops[0]}`);
  // The command is the last word of the path, as az reads it; options carry the resources' names.
  const cmd = ops[ops.length - 1]!;
  if (ops[0] === 'account' && /^(show|list)$/.test(cmd)) return read;
  return AZ_READ.test(cmd) ? read : change(`az ${words}`);
}

// ---- kubectl, oc: `kubectl [global flags] VERB [TYPE] [NAME] [flags]` ----

const KUBE_VALUED =
  /^(-n|--namespace|--context|--cluster|--user|--kubeconfig|-s|--server|--token|--as|--as-group|--as-uid|-o|--output|--request-timeout|-l|--selector|-c|--container|--field-selector|--sort-by|--tail|--since|--for|--timeout|--to-revision|-f|--filename|-k|--kustomize|--type|--image|--replicas|--port|--address|-p|--patch|--overrides|--subresource|--template)$/;
const KUBE_READ =
  /^(get|describe|logs|log|top|explain|api-resources|api-versions|version|cluster-info|diff|wait|events|kustomize|completion|options|help|plugin)$/;
/** An output that prints a secret's data (names, wide and the default table print none). */
const PRINTS_DATA = /^(ya?ml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$/;
const SECRET_TYPE = /^(secrets?)([,./]|$)|,secrets?(,|\/|$)/;

/** The contexts local cluster tools name their clusters (kind's `kind-NAME`, k3d's `k3d-NAME`, minikube's, Docker Desktop's, Rancher Desktop's, Colima's, OrbStack's). */
const LOCAL_CLUSTER_CONTEXT = /^(kind-[\w.-]+|k3d-[\w.-]+|minikube|docker-desktop|rancher-desktop|colima|orbstack)$/;

/** kubectl's verbs, by which `k` is known as its alias. */
const KUBE_VERB =
  /^(get|describe|logs|top|explain|api-resources|api-versions|version|cluster-info|diff|wait|events|apply|create|delete|edit|patch|replace|scale|autoscale|rollout|expose|run|exec|port-forward|cp|label|annotate|config|certificate|auth|cordon|uncordon|drain|taint|set|debug|attach|proxy|kustomize)$/;

/** A program that only sometimes is a cloud client: judged as any program is, changing nothing by itself. */
const judgedAsUnknown = (prog: string, args: Word[], st: State): Reading => {
  judgeUnknownProgram(prog, args, st);
  return read;
};

function readKubectl(prog: string, args: Word[]): Reading {
  const ops = text(operands(args, KUBE_VALUED));
  const [verb = '', sub = ''] = ops;
  if (!verb || onlyAsksAbout(args)) return read;
  const output = optionValue(args, /^(-o|--output)$/) ?? args.find((a) => /^-o\w/.test(a.text))?.text.slice(2);
  // A cluster of this machine's own containers, by the context its tool names it (`kind-platform`, `k3d-dev`,
  // `minikube`, Docker Desktop's) is a test bed here, as a container run is, whatever the verb; its secrets are still read.
  const localCluster = LOCAL_CLUSTER_CONTEXT.test(optionValue(args, /^--context$/) ?? '');
  if (verb === 'get' && SECRET_TYPE.test(sub) && PRINTS_DATA.test(output ?? '')) return secret(`${prog} get ${sub} -o ${output}`);
  if (verb === 'describe' && SECRET_TYPE.test(sub)) return secret(`${prog} describe ${sub}`);
  if (KUBE_READ.test(verb) || localCluster) return read;
  // krew installs plugins into the user's ~/.krew, as helm's plugins go into its directory; adding
  // an index makes another source of plugins trusted.
  if (verb === 'krew' && sub !== 'index') return read;
  if (verb === 'auth' && /^(can-i|whoami)$/.test(sub)) return read;
  // A port forwarded to this machine's loopback changes nothing in the cluster; `--address` on every
  // interface is judged as a listener.
  if (verb === 'port-forward') return read;
  if (verb === 'rollout' && /^(status|history)$/.test(sub)) return read;
  if (verb === 'config') {
    if (sub === 'view') return has(args, /^--raw$/) ? secret(`${prog} config view --raw`) : read;
    if (/^(get-contexts|get-clusters|get-users|current-context)$/.test(sub)) return read;
  }
  if (prog === 'oc' && (/^(status|whoami|projects)$/.test(verb) || (verb === 'project' && !sub))) return read;
  // A plugin's own read (`kubectl hns tree acme-org`, `kubectl tree deploy x`, its completion script printed by
  // `kubectl stern --completion bash`): a plugin is no verb kubectl has.
  if (!KUBE_VERB.test(verb) && (verb === 'tree' || /^(tree|describe|get|list|ls|show|status|version|view|check)$/.test(sub) || has(args, /^--completions?$/)))
    return read;
  return change(`${prog} ${ops.slice(0, /^(rollout|auth|config|create|set|certificate|plugin)$/.test(verb) ? 2 : 1).join(' ')}`);
}

// ---- helm: `helm [global flags] COMMAND` ----

// `unittest` is the unit-test plugin's: it renders the chart here and checks it, as `template` does; `schema-gen` is
// the schema plugin's, which writes a chart's values schema here.
const HELM_READ =
  /^(list|ls|status|get|template|lint|show|inspect|search|history|hist|version|env|verify|package|dependency|dep|pull|fetch|create|completion|help|unittest|schema-gen)$/;

function readHelm(args: Word[]): Reading {
  const ops = text(
    operands(
      args,
      /^(-n|--namespace|--kube-context|--kubeconfig|--kube-apiserver|--kube-token|--kube-as-user|--host|--registry-config|--repository-config|--repository-cache|-o|--output)$/,
    ),
  );
  const [cmd = '', sub = ''] = ops;
  if (!cmd || HELM_READ.test(cmd)) return read;
  // `repo update` refreshes the local copy of the repositories' indexes.
  if (/^(repo|plugin|registry)$/.test(cmd) && /^(list|ls|index)$/.test(sub)) return read;
  if (cmd === 'repo' && sub === 'update') return read;
  // A plugin is installed into the user's helm directory, as `cargo install` installs for the user.
  if (cmd === 'plugin' && /^(install|update|uninstall|remove|rm)$/.test(sub)) return read;
  return change(`helm ${ops.slice(0, /^(repo|plugin|registry)$/.test(cmd) ? 2 : 1).join(' ')}`);
}

// ---- terraform, tofu, terragrunt: `terraform [-chdir=DIR] COMMAND` ----

/**
 * Commands that plan, check or print: `output` prints the values the configuration exports, sensitive
 * ones hidden unless asked for by name or as JSON, which is how CI reads them; `test` runs the
 * project's own tests, as `make test` does, whatever they provision.
 */
const TF_READ =
  /^(init|test|validate|fmt|plan|show|output|graph|providers|version|console|get|metadata|modules|help|render-json|hclfmt|info|graph-dependencies|validate-inputs|output-module-groups|scaffold|catalog|terragrunt-info)$/;

/** terragrunt's own commands that only list, render or generate the stack's files in the workspace. */
const TERRAGRUNT_READ = /^(find|list|dag|render|hcl|info|stack (generate|output|clean))$/;
/** terragrunt's options that take a value, so a value is not read as the terraform command. */
const TERRAGRUNT_VALUED =
  /^(-chdir|--terragrunt-working-dir|--working-dir|--filter|--out-dir|--json-out-dir|--queue-include-dir|--queue-exclude-dir|--parallelism|--config|--tf-path|--log-level|--log-format|--iam-assume-role|--source)$/;

function readTerraform(prog: string, args: Word[]): Reading {
  let ops = text(operands(args, TERRAGRUNT_VALUED));
  if (prog === 'terragrunt' && (TERRAGRUNT_READ.test(ops[0] ?? '') || TERRAGRUNT_READ.test(ops.slice(0, 2).join(' ')))) return read;
  // terragrunt runs a terraform command over many modules: `run-all plan`, `run --all apply`, and
  // `run [options] -- plan`, where the command is what follows `--`.
  if (prog === 'terragrunt' && /^(run-all|run)$/.test(ops[0] ?? '')) {
    const dashes = args.findIndex((a) => a.text === '--');
    ops = dashes >= 0 ? text(args.slice(dashes + 1)) : ops.slice(1);
  }
  const [cmd = '', sub = ''] = ops;
  // Migrating the state copies it into another backend, the one every run of the project then reads.
  if (cmd === 'init' && args.some((a) => /^-{1,2}(migrate-state|force-copy)$/.test(a.text))) return change(`${prog} init -migrate-state`);
  // An output asked for by name is printed even when sensitive: a password's or a key's value.
  if (cmd === 'output' && sub && isCredentialName(sub)) return secret(`${prog} output ${sub}`);
  if (!cmd || TF_READ.test(cmd)) return read;
  // `state pull` prints the whole state as stored, every resource's secrets unredacted; `show` masks the sensitive ones.
  if (cmd === 'state' && sub === 'pull') return secret(`${prog} state pull`);
  if (cmd === 'state' && /^(list|show)$/.test(sub)) return read;
  if (cmd === 'workspace' && /^(list|show|select)$/.test(sub)) return read;
  return change(`${prog} ${ops.slice(0, /^(state|workspace|providers)$/.test(cmd) ? 2 : 1).join(' ')}`);
}

// ---- pulumi: `pulumi COMMAND` ----

function readPulumi(args: Word[]): Reading {
  const ops = text(operands(args, /^(-s|--stack|-C|--cwd)$/));
  const [cmd = '', sub = ''] = ops;
  // A project scaffolded (`pulumi new`, as `cdk init`) and a stack's settings set or removed (kept in the
  // project's `Pulumi.<stack>.yaml`) are files here.
  if (!cmd || /^(preview|pre|whoami|about|version|logs|help|gen-completion|schema|convert|new)$/.test(cmd)) return read;
  if (cmd === 'stack' && /^(|ls|output|history|graph|select|export)$/.test(sub)) return read;
  if (cmd === 'config' && /^(|get|env|set|set-all|rm|rm-all)$/.test(sub)) return read;
  return change(`pulumi ${ops.slice(0, /^(stack|config|plugin)$/.test(cmd) ? 2 : 1).join(' ')}`);
}

// ---- cdk: `cdk COMMAND [STACKS]` ----

function readCdk(args: Word[]): Reading {
  const cmd = operands(args, /^(-a|--app|-c|--context|--profile|-o|--output)$/)[0]?.text ?? '';
  if (!cmd || /^(synth|synthesize|diff|ls|list|doctor|docs|doc|notices|acknowledge|ack|version|init|context|metadata|help)$/.test(cmd)) return read;
  return change(`cdk ${cmd}`);
}

// ---- delivery tools: `argocd app sync`, `azd up`, `sam deploy`, `vercel`, by their command paths ----

/**
 * A delivery tool's command path (its first words, or `topic:command` for heroku and netlify) is a
 * read when it matches `read`, a secret when it matches `secret`, and otherwise a change: the
 * commands that sync, deploy, provision, roll back, delete or sign in act on the cluster or the cloud.
 */
interface Table {
  read: RegExp;
  secret?: RegExp;
  /** Options that take a value (so their values are not read as the command's words). */
  valued?: RegExp;
  /** How many words name the command; the rest are its resources. */
  depth?: number;
  /** Options with which any command only prints what it would apply (`flux install --export`). */
  printsOnly?: RegExp;
}
const DELIVERY: Record<string, Table> = {
  argocd: {
    read: /^((app|appset|applicationset) (list|get|diff|history|manifests|logs|resources|wait)|(cluster|repo|repocreds|proj|cert|gpg|account|context|project) (list|get|get-user-info|can-i|windows)|version|context|completion|help|admin (app generate-spec|settings validate|proj generate-spec))\b/,
    secret: /^(admin initial-password|admin export|account generate-token|proj role create-token)\b/,
    valued: /^(-n|--namespace|--server|--auth-token|--config|-o|--output|--grpc-web-root-path|--context|--port-forward-namespace|--core)$/,
    depth: 2,
  },
  cmctl: { read: /^(status|check|inspect|version|convert|completion|help)\b/, valued: /^(-n|--namespace|--context|--kubeconfig|-o|--output)$/, depth: 1 },
  azd: {
    read: /^(show|version|help|completion|init|restore|build|package|monitor|env list|env select|env new|config (show|get|list-alpha)|template (list|show|source list)|auth login --check-status)\b/,
    secret: /^(env get-values?|auth token)\b/,
    valued: /^(-e|--environment|-C|--cwd|-o|--output)$/,
    depth: 2,
  },
  sam: {
    read: /^(build|validate|init|list|logs|traces|local|docs|help|--version)\b/,
    valued: /^(-t|--template|--template-file|--config-env|--config-file|--region|--profile)$/,
    depth: 1,
  },
  // Flux CD's GitOps client, and the Flux resource manager of HPC clusters, whose reads and whose
  // change of the user's own job's urgency share the name.
  flux: {
    read: /^(get|check|logs|stats|tree|trace|diff|build|events|export|version|completion|help|pull|envsubst|resource (list|status|info)|queue (status|list)|jobs|job (info|status|eventlog|urgency|wait)|uptime|overlay status)\b/,
    valued: /^(-n|--namespace|--context|--kubeconfig|--timeout)$/,
    depth: 1,
    printsOnly: /^--export$/,
  },
  // Slurm's administration: showing the cluster reads; creating reservations, updating nodes and
  // partitions, reconfiguring or shutting down the controllers changes it for every user; `token`
  // prints a JWT that acts as the user.
  scontrol: {
    read: /^(show|ping|version|listpids|help|getaddrs|pidinfo)\b/,
    secret: /^token\b/,
    valued: /^(-M|--clusters|-o|--oneliner)$/,
    depth: 1,
  },
  sacctmgr: { read: /^(show|list|help|version)\b/, valued: /^(-M|--clusters|-P|--parsable2)$/, depth: 1 },
  // kustomize only renders and edits the kustomization here.
  kustomize: { read: /^/, depth: 1 },
  skaffold: {
    read: /^(build|render|diagnose|fix|init|schema|version|config list|inspect|lint|test|completion|help|survey|filter)\b/,
    valued: /^(-p|--profile|-f|--filename|-m|--module|--kube-context|--kubeconfig|-n|--namespace|-d|--default-repo)$/,
    depth: 1,
  },
  // DevSpace's and Telepresence's loops deploy to the cluster, sync into its pods, open shells in them or
  // switch the kube context; their project files, profiles, lists and logs are read here.
  devspace: {
    read: /^(init|add|open|list|print|reset|ui|logs|status|cleanup|update|version|help|completion|analyze|run|use profile)\b/,
    valued: /^(-p|--profile|-n|--namespace|--kube-context|--config|--var)$/,
    depth: 2,
  },
  telepresence: { read: /^(version|quit|status|list|loglevel|help|completion|gather-logs|genyaml|config view)\b/, depth: 2 },
  // Appwrite's client acts on the project's server: what it lists, gets and scaffolds is read; what it
  // pushes, creates or deletes there, its own endpoint and keys (`client`), and its shell completion are changes.
  appwrite: { read: /^(init|accounts|account get|[\w-]+ (list|get)|help|-v|--version)\b/, depth: 2 },
  // aws-vault keeps the user's AWS keys: `exec` and `export` hand them to a command or print them, `login`
  // opens the console with them, `add`, `remove` and `rotate` change them; `list` names the profiles.
  'aws-vault': { read: /^(list|ls|help|--version)\b/, secret: /^(exec|export|login|proxy)\b/, depth: 1 },
  tilt: { read: /^(version|get|describe|logs|doctor|args|dump|explain|completion|help|verify-install|alpha tree-view)\b/, depth: 1 },
  serverless: {
    read: /^(package|print|info|logs|metrics|invoke local|offline|plugin (list|search|install|uninstall)|wsgi serve|help|--version|version|doctor)\b/,
    secret: /^(config credentials|info --verbose)\b/,
    valued: /^(-s|--stage|-r|--region|-c|--config|--aws-profile|-f|--function)$/,
    depth: 2,
  },
  vercel: {
    read: /^(ls|list|inspect|logs|whoami|build|dev|help|--version|(env|domains|dns|certs|alias|secrets|teams|projects|project) (ls|list)|bisect|git ls)\b/,
    secret: /^(pull|env pull)\b/,
    valued: /^(-t|--token|--scope|-S|--cwd|-A|--local-config|-Q|--global-config)$/,
    depth: 2,
  },
  netlify: {
    read: /^(status|build|dev|serve|functions:(list|serve|build|create)|sites:list|env:list|logs(:\w+)?|open(:\w+)?|watch|help|--version|completion|recipes(:list)?|switch)\b/,
    secret: /^(env:get|env:list --plain)\b/,
    valued: /^(--context|--filter|--site|--auth|--dir|--functions)$/,
    depth: 1,
  },
  // An app's repository cloned (`git:clone`) comes into the workspace, as a clone does.
  heroku: {
    read: /^((apps|ps|releases|addons|domains|regions|stack|spaces|teams|pipelines|features|labs|buildpacks|certs|drains|access|webhooks|plugins|status|whoami|info|logs|version|help|pg|redis|orgs|sessions|authorizations)(:(info|list|wait|diff|versions|status|outliers|ps|locks|blocking|bloat|index-usage|long-running-queries|table-size|maintenance))?|git:clone)$/,
    secret: /^(config(:get)?|auth:token|pg:credentials(:url)?|redis:credentials|authorizations:create)$/,
    valued: /^(-a|--app|-r|--remote|-t|--team|-s|--space)$/,
    depth: 1,
  },
  // UHPPOTE access controllers, through uhppoted's CLI: doors opened or set normally open, cards added or removed, the
  // controller's time, address and listener changed; its getters, lists and event listening read.
  'uhppote-cli': { read: /^(get-[\w-]+|list-[\w-]+|version|help|listen|describe)$/, valued: /^(--bind|--broadcast|--listen|--config|--timeout)$/, depth: 1 },
  // Helm's chart-testing installs the changed charts into the cluster it is pointed at (`ct install`, `lint-and-install`);
  // its other verbs (lint, the list of changed charts) read, and so do the other programs named ct (CoreOS's config
  // transpiler, Certificate Transparency's client).
  ct: { read: /^(?!(install|lint-and-install)( |$))/, valued: /^(--config|--in-file|--out-file|--files-dir|-d)$/, depth: 1 },
  // Clever Cloud's CLI acts on the user's applications there: `ssh` opens a shell in one, `deploy`, `restart`, `scale`
  // and the rest change them; `env` and `published-config` print their settings, secrets among them; status and logs read.
  clever: {
    read: /^(status|activity|applications|logs|accesslogs|domain|diag|profile|version|help|link|unlink)\b/,
    secret: /^(env|published-config|tokens)\b/,
    valued: /^(-a|--alias|--app|-o|--org)$/,
    depth: 1,
  },
  // gh-pages publishes a directory to the repository's `gh-pages` branch, the project's public site.
  'gh-pages': { read: /^(?!)/, depth: 1 },
  // Surge publishes the directory it is run in, or the one named, to a public domain; bare, it deploys.
  surge: { read: /^(list|whoami|help|--help|--version|logout|login)\b/, secret: /^token\b/, valued: /^(-d|--domain|-e|--endpoint)$/, depth: 1 },
};
DELIVERY.sls = DELIVERY.serverless!;
DELIVERY.ntl = DELIVERY.netlify!;
DELIVERY.vc = DELIVERY.vercel!;
// `now` is Vercel's CLI by its earlier name: bare, it deploys the directory it is run in.
DELIVERY.now = DELIVERY.vercel!;

function readDelivery(prog: string, args: Word[]): Reading {
  const t = DELIVERY[prog]!;
  const ops = text(operands(args, t.valued ?? /^$/));
  // Options that change what a read hands over (`env:list --plain`, `info --verbose`) are read with the path.
  const flags = args.filter((a) => /^--(plain|verbose|show-values)$/.test(a.text)).map((a) => a.text);
  const path = [...ops.slice(0, t.depth ?? 1), ...flags].join(' ');
  const named = `${prog} ${ops.slice(0, t.depth ?? 1).join(' ')}`.trim();
  const heads = [ops.slice(0, 2).join(' '), ops[0] ?? ''];
  if ([path, ...heads].some((h) => t.secret?.test(h))) return secret(named);
  if (!ops.length && args.length && args.every((a) => /^(-h|--help|-v|--version)$/.test(a.text))) return read;
  // A command's help (`devspace dev -h`) prints and does nothing; so does one told only to print what it would apply.
  if (args.at(-1) && /^(-h|--help)$/.test(args.at(-1)!.text)) return read;
  if (t.printsOnly && args.some((a) => t.printsOnly!.test(a.text))) return read;
  return heads.some((h) => t.read.test(h)) ? read : change(named);
}

/**
 * Object-storage clients (s3cmd, s5cmd, rclone, azcopy, Backblaze's b2, MinIO's mc) act on buckets with
 * the user's keys: copying, syncing, moving or piping into a bucket, deleting from one, making or
 * removing one, mounting or serving one, and their keys stored (`rclone config create`, `mc alias
 * set`) change what is kept there or the user's credentials; `rclone config show` and `dump` print
 * those keys. Listing, sizes, reads and downloads to this machine read.
 */
const STORAGE_CHANGES =
  /^(put|cp|copy|copyto|sync|bisync|mv|move|moveto|rm|del|delete|deletefile|purge|rmdir|rmdirs|mkdir|mb|rb|setacl|setpolicy|modify|restore|pipe|rcat|mirror|upload-file|upload_file|sync-folder|delete-file-version|delete-bucket|create-bucket|update-bucket|hide-file|mount|serve|share|alias|admin|policy|anonymous|ilm|retention|legalhold|event|replicate|encrypt|remove|make|run|dedupe|cleanup|touch|settier|backend|authorize|authorize-account|login)$/;
function readObjectStorage(prog: string, args: Word[]): Reading {
  const ops = text(operands(args, /^(--config|--profile|-c|--credentials-file|--endpoint-url|--log|--numworkers)$/));
  const [cmd = '', sub = ''] = ops;
  if (prog === 'rclone' && cmd === 'config') {
    if (/^(file|paths|providers|redacted)$/.test(sub)) return read;
    return /^(show|dump|)$/.test(sub) ? secret(`rclone config ${sub}`.trim()) : change(`rclone config ${sub}`);
  }
  // A copy whose destination is a path here (`rclone copy remote:x ./data`, `s5cmd cp 's3://b/*' out/`)
  // downloads; mc's aliases look like paths, so its copies stay changes. mc shares its name with
  // Midnight Commander, whose operands are directories: only mc's verbs are changes. The destination is
  // the last path named: an option's value read as an operand (`--bwlimit 500k`) is none.
  const storage = (o: string) => /^([a-z0-9]+:\/\/|[\w.-]+:)/i.test(o);
  const destination = ops.filter((o, k) => k > 1 && (storage(o) || /\/|^\.{1,2}$/.test(o))).at(-1) ?? '';
  if (prog !== 'mc' && /^(cp|copy|copyto|sync)$/.test(cmd) && ops.length > 2 && !storage(destination)) return read;
  // b2's fourth version groups its verbs (`b2 account authorize`, `b2 bucket create`, `b2 key create`, `b2 replication setup`).
  if (/^b2(v4)?$/.test(prog) && /^(account|bucket|key|file|replication|notification-rule)$/.test(cmd))
    return /^(authorize|create|delete|update|setup|upload|unhide|hide|copy-by-id|server-side-copy|large|cancel|set|clear|enable|disable)$/.test(sub)
      ? change(`${prog} ${cmd} ${sub}`)
      : read;
  return STORAGE_CHANGES.test(cmd) ? change(`${prog} ${cmd}`) : read;
}

/**
 * crane (go-containerregistry) acts on images in registries with the user's registry logins: appending
 * layers, copying, deleting, mutating, rebasing, tagging, pushing, or writing an index (`index append`,
 * `index filter -t`) change what a registry holds; `auth get` and `auth token` print a credential and
 * `auth login` stores one. Listing, manifests, configs, digests, pulls and exports read.
 */
function readCrane(prog: string, args: Word[]): Reading {
  const [cmd = '', sub = ''] = text(
    operands(args, /^(-t|--tag|--platform|-f|--new_layer|--entrypoint|--cmd|--env|--label|-o|--output|--base|--old_base|--new_base)$/),
  );
  if (cmd === 'auth') return /^(get|token)$/.test(sub) ? secret(`${prog} auth ${sub}`) : /^(login|logout)$/.test(sub) ? change(`${prog} auth ${sub}`) : read;
  if (cmd === 'index') return /^(append|filter)$/.test(sub) && args.some((a) => /^(-t|--tag)(=|$)/.test(a.text)) ? change(`${prog} index ${sub}`) : read;
  return /^(append|copy|cp|delete|mutate|rebase|tag|push|flatten|edit)$/.test(cmd) ? change(`${prog} ${cmd}`) : read;
}

// ---- the rest (doctl, flyctl, oci, ibmcloud, Fission's functions on the cluster, eksctl, argo, tctl, Uberspace's hosting account): the first verb-like word ----

const READS =
  /^(list|ls|describe|get|show|plan|validate|fmt|version|help|output|graph|providers|head|wait|logs|top|explain|diff|status|whoami|info|template|lint|search|preview|api-resources|api-versions|cluster-info|view|history)([-_].*)?$/;
const CHANGES =
  /^(apply|destroy|down|kill|import|taint|untaint|force-unlock|refresh|up|delete|rm|rb|mv|cp|sync|mb|create|update|deploy|put|set|add|remove|start|stop|restart|reset|resize|terminate|reboot|run|exec|ssh|scp|scale|patch|replace|rollout|drain|cordon|uncordon|label|annotate|edit|install|uninstall|upgrade|rollback|login|invoke|publish|attach|detach|modify|enable|disable|purge|cancel|promote|push|release|revoke|authorize|assign|grant|register|deregister|tag|untag|restore|copy|move|port-forward|proxy|submit|resubmit|retry|suspend|clear|archive|roll|rotate|activate|deactivate|flush|pause|resume|associate|disassociate|suppress|launch|signup|unset|console)([-_].*)?$/;

function readByFirstVerb(prog: string, args: Word[]): Reading {
  const ops = text(operands(args));
  // A cluster's kubeconfig saved (`doctl kubernetes cluster kubeconfig save`) goes into the user's ~/.kube/config,
  // which every later kubectl uses; shown, it prints the cluster's credentials.
  const kubeconfig = ops.indexOf('kubeconfig');
  if (kubeconfig >= 0 && /^(save|show)$/.test(ops[kubeconfig + 1] ?? ''))
    return ops[kubeconfig + 1] === 'save' ? change(`${prog} kubeconfig save`) : secret(`${prog} kubeconfig show`);
  for (const o of ops) {
    if (READS.test(o)) return read;
    if (CHANGES.test(o)) return change(`${prog} ${o}`);
  }
  return read;
}

/** A client whose commands are `topic:verb` (`site:create`, `secret:site:set`), read by any of their words; a remote command runs on the service. */
function readByColonVerb(prog: string, args: Word[]): Reading {
  const [cmd = ''] = text(operands(args));
  const words = cmd.split(':');
  // A task that makes something here first (`generate:release-notes`, `build:assets`) reaches nothing by its later words.
  if (/^(generate|build|test|lint|check|make)$/.test(words[0]!) || (words.some((w) => READS.test(w)) && !words.some((w) => CHANGES.test(w)))) return read;
  return words.some((w) => CHANGES.test(w) || /^(remote|login|auth)$/.test(w)) ? change(`${prog} ${cmd}`) : read;
}

/**
 * A cluster's coordination stores and scheduler (etcd, Consul, Nomad), reached at the address their
 * environment names with its token: besides the verbs every such client has, their own change the
 * cluster (`etcdctl del`, `defrag`, `consul reload`, `join`, `leave`, `nomad system gc`, `job dispatch`).
 */
const COORDINATION_CHANGES =
  /^(del|txn|compaction|defrag|elect|lock|move-leader|make-mirror|reload|join|leave|force-leave|event|maint|gc|dispatch|revert|eligibility)$/;
function readCoordination(prog: string, args: Word[]): Reading {
  // A Kubernetes cluster's etcd holds its secrets under /registry/secrets; the whole key space holds them too.
  const ops = text(operands(args, /^(--endpoints|-address|-token|-namespace|-region)$/));
  if (prog === 'etcdctl' && ops[0] === 'get' && ops.slice(1).some((k) => k === '/' || k.startsWith('/registry/secrets') || k === '""'))
    return secret(`${prog} get ${ops[1]}`);
  // consul's `tls ca create` and `tls cert create` write a certificate authority's files here, for a cluster yet to be set up.
  if (prog === 'consul' && ops[0] === 'tls') return read;
  const r = readByFirstVerb(prog, args);
  if (r.kind !== 'read') return r;
  const verb = ops.find((o) => COORDINATION_CHANGES.test(o));
  return verb ? change(`${prog} ${verb}`) : read;
}

/**
 * HashiCorp Vault's client acts on the server VAULT_ADDR names with the user's token: reading a secret,
 * unwrapping one or minting a token prints a credential, and writing, enabling engines or methods,
 * policies and the operator's commands change the server. Its status, listings of names and a dev
 * server on loopback (`vault server -dev`) read or stay here.
 */
function readVault(prog: string, args: Word[]): Reading {
  const [cmd = '', sub = ''] = text(operands(args));
  const what = `${prog} ${cmd}${sub ? ` ${sub}` : ''}`;
  if (!cmd || /^(status|version|list|audit-list|path-help|help)$/.test(cmd) || sub === 'list' || (cmd === 'token' && sub === 'lookup')) return read;
  if (cmd === 'server' && args.some((a) => /^-dev(=|$)/.test(a.text))) return read;
  // A secret's metadata (its versions and custom fields) is no secret; putting, patching or deleting it changes the server.
  if (cmd === 'kv' && sub === 'metadata') return text(operands(args))[2] === 'get' ? read : change(what);
  if (/^(read|unwrap|token-create)$/.test(cmd) || (cmd === 'kv' && sub === 'get') || cmd === 'token') return secret(what);
  return change(what);
}

/**
 * Doppler's CLI fetches the project's secrets with the user's token: printing or downloading them, its
 * stored configuration (which holds the token) and `run` (the secrets go into the command's
 * environment) read a credential; logging in, setting up a project and changing secrets change it.
 */
function readDoppler(prog: string, args: Word[]): Reading {
  const [cmd = '', sub = ''] = text(operands(args));
  const what = `${prog} ${cmd}${sub ? ` ${sub}` : ''}`;
  if (!cmd || /^(help|version|completion)$/.test(cmd)) return read;
  if (cmd === 'secrets' && /^(set|delete|upload)$/.test(sub)) return change(what);
  if (/^(secrets|run|configure)$/.test(cmd)) return secret(what);
  return change(what);
}

/**
 * Alertmanager's client changes the running Alertmanager it is pointed at: silences added, expired or
 * imported mute or restore its alerts, and alerts added fire them; queries, its configuration shown
 * and templates rendered read.
 */
function readAmtool(prog: string, args: Word[]): Reading {
  const [cmd = '', sub = ''] = text(operands(args));
  return /^(silence|alert)$/.test(cmd) && /^(add|expire|import|update)$/.test(sub) ? change(`${prog} ${cmd} ${sub}`) : read;
}

/**
 * A playbook's plays change the machines of its inventory, over ssh or on this one with root's powers,
 * whatever the playbook is named; checking its syntax, listing its hosts, tasks or tags and a dry run
 * (`--check`) change none.
 */
function readAnsiblePlaybook(prog: string, args: Word[]): Reading {
  const reads = args.some((a) => /^(--syntax-check|--list-hosts|--list-tasks|--list-tags|--check|-C|--version|-h|--help)$/.test(a.text));
  return reads ? read : change(`${prog} ${text(operands(args, /^(-i|--inventory|-e|--extra-vars|-l|--limit|-u|--user|-t|--tags)$/)).join(' ')}`);
}

/** `ansible`'s options that take a value. */
const ANSIBLE_VALUED =
  /^(-i|--inventory|--inventory-file|-m|--module-name|-a|--args|-e|--extra-vars|-f|--forks|-l|--limit|-u|--user|-c|--connection|-T|--timeout|-B|--background|-P|--poll|-t|--tree|-M|--module-path|--private-key|--key-file|--vault-id|--vault-password-file|--become-user|--become-method|--playbook-dir|--task-timeout|--ssh-common-args|--ssh-extra-args|--scp-extra-args|--sftp-extra-args)$/;
/** Modules the controller runs itself, touching no host: they print, load or check variables. */
const ANSIBLE_CONTROLLER_MODULE = /^(ansible\.builtin\.)?(debug|include_vars|set_fact|assert|fail|meta)$/;
/** Modules that run the project's own roles and task files. */
const ANSIBLE_PROJECT_MODULE = /^(ansible\.builtin\.)?(include_role|import_role|include_tasks|import_tasks)$/;
/** Modules whose argument is a command line. */
export const ANSIBLE_COMMAND_MODULE = /^(ansible\.builtin\.)?(command|shell|raw)$/;

/** One `ansible` ad-hoc run: the host pattern, the module, its arguments, and whether it runs as root. */
export function ansibleAdHoc(args: Word[]): { pattern: string; module: string; moduleArgs: string; local: boolean; become: boolean } {
  const [pattern = ''] = text(operands(args, ANSIBLE_VALUED));
  const module = optionValue(args, /^(-m|--module-name)$/) ?? 'command';
  const moduleArgs = optionValue(args, /^(-a|--args)$/) ?? '';
  const become = args.some((a) => /^(-b|--become|-K|--ask-become-pass)$/.test(a.text));
  return { pattern, module, moduleArgs, local: /^(localhost|127\.0\.0\.1),?$/.test(pattern), become };
}

/**
 * An `ansible` ad-hoc command runs one module (the command module unless `-m` names another) on every
 * host its pattern picks from the inventory, over ssh, as root with `-b`. A module the controller runs
 * itself and the listings touch no host; printing a variable named like a credential reads a secret.
 * On this machine, as the user, the command modules are judged as the command they run (executors.ts)
 * and the project's roles as the project's code.
 */
function readAnsibleAdHoc(prog: string, args: Word[]): Reading {
  if (args.some((a) => /^(--list-hosts|--syntax-check|--version|-h|--help)$/.test(a.text))) return read;
  const { pattern, module, moduleArgs, local, become } = ansibleAdHoc(args);
  if (!pattern) return read;
  if (ANSIBLE_CONTROLLER_MODULE.test(module)) {
    const shown = /\bvar=(\S+)/.exec(moduleArgs)?.[1] ?? '';
    return shown.split(/\W+/).some((name) => isCredentialName(name)) ? secret(`${prog} ${pattern} -m ${module} ${moduleArgs}`) : read;
  }
  if (local && !become && (ANSIBLE_COMMAND_MODULE.test(module) || ANSIBLE_PROJECT_MODULE.test(module))) return read;
  return change(`${prog} ${pattern} -m ${module}`);
}

/** rabbitmqadmin's options that take a value. */
const RABBITMQADMIN_VALUED =
  /^(--vhost|-V|--config|-c|--node|-N|--host|-H|--port|-P|--username|-u|--password|-p|--format|-f|--base-uri|-U|--path-prefix|--table-style)$/;
/**
 * RabbitMQ's management client acts on the broker its options or configuration name, with its user's
 * credentials: declaring, deleting, purging, binding, importing, publishing and closing change what the
 * broker holds and who may use it; exporting all the definitions hands over its users' password hashes
 * (a vhost's, or an export that excludes the users, does not); its configuration file's nodes are the
 * user's stored logins. Listings, `show`, statistics, health checks and hashing a password here read.
 */
function readRabbitmqAdmin(prog: string, args: Word[]): Reading {
  const ops = text(operands(args, RABBITMQADMIN_VALUED));
  const [group = '', verb = ''] = ops;
  if (!group || onlyAsksAbout(args)) return read;
  const exportsUsers = (group === 'export' || (group === 'definitions' && verb === 'export')) && !args.some((a) => /exclude_users/.test(a.text));
  const revealsPasswords = group === 'config_file' && args.some((a) => a.text === '--reveal-passwords');
  if (exportsUsers || revealsPasswords) return secret(`${prog} ${group} ${verb}`.trim());
  if (
    ops.slice(0, 3).some((w) => /^(list\w*|show\w*|help|health_check|passwords|version|stats|status\w*|memory_breakdown\w*|export_from_vhost|export)$/.test(w))
  )
    return read;
  return change(`${prog} ${group} ${verb}`.trim());
}

/**
 * OpenStack's unified client acts on the cloud its `OS_*` variables or `clouds.yaml` name, with the
 * user's credentials: `token issue`, credentials and EC2 keys shown or listed, and a secret's payload
 * hand over credentials; the rest by its verb, as the other clouds' clients are read.
 */
function readOpenStack(prog: string, args: Word[]): Reading {
  const ops = text(operands(args, /^(--os-cloud|--os-region-name|--os-project-name|-f|--format|-c|--column)$/));
  const [group = '', verb = '', third = ''] = ops;
  if (
    (group === 'token' && verb === 'issue') ||
    (group === 'credential' && /^(show|list)$/.test(verb)) ||
    (group === 'ec2' && verb === 'credentials' && /^(show|list)$/.test(third)) ||
    (group === 'secret' && verb === 'get' && has(args, /^(-p|--payload|--decrypt)$/))
  )
    return secret(`${prog} ${ops.slice(0, 3).join(' ')}`);
  return readByFirstVerb(prog, args);
}

/**
 * OpenStack's older per-service clients (`nova boot`, `glance image-create`, `neutron net-delete`) name
 * the operation in one hyphenated word: a part of it that changes, or `boot`, changes the cloud.
 */
function readOpenStackServiceClient(prog: string, args: Word[]): Reading {
  const [cmd = ''] = text(operands(args));
  const parts = cmd.split('-');
  if (prog === 'barbican' && cmd === 'secret' && has(args, /^(-p|--payload|--decrypt)$/)) return secret(`${prog} secret get`);
  return parts.some((w) => CHANGES.test(w) || /^(boot|evacuate|migrate|live|rebuild|rescue|shelve|lock)$/.test(w)) ? change(`${prog} ${cmd}`) : read;
}

/**
 * Kolla-Ansible deploys OpenStack's containers onto its inventory's hosts (the machine itself in the
 * all-in-one inventory) and installs what they need there. Its checks, its shell completion and its
 * Ansible collections (installed for the user, as a package manager does) leave them as they are.
 */
function readKollaAnsible(prog: string, args: Word[]): Reading {
  const [cmd = ''] = text(operands(args, /^(-i|--inventory|-e|--extra|--tags|-t|--limit|--configdir|--passwords)$/));
  return !cmd || /^(complete|help|prechecks|check|validate-config|gather-facts|install-deps)$/.test(cmd) || onlyAsksAbout(args)
    ? read
    : change(`${prog} ${cmd}`);
}

/**
 * JFrog's CLI acts on the Artifactory server of its stored configuration with the user's token: uploads,
 * build-info and Go publishes, a build tool run with its deploy goal or Gradle's publish task, moves,
 * deletions, property changes, promotions, release bundles and plugins installed change it or the home's
 * configuration; searches, downloads, pings and audits read.
 */
const JFROG_CHANGES =
  /^(u|upload|bp|build-publish|bpr|build-promote|bag|gp|go-publish|deploy|publish|artifactoryPublish|artifactoryP|del|delete|mv|move|cp|copy|sp|set-props|delp|delete-props|rbc|rbp|rbd|rbs|rbe|rbdell|rbdelr)$/;
function readJfrog(prog: string, args: Word[]): Reading {
  const ops = text(operands(args));
  if (
    (ops[0] === 'plugin' && /^(install|uninstall|publish)$/.test(ops[1] ?? '')) ||
    (/^(c|config)$/.test(ops[0] ?? '') && /^(add|edit|rm|remove|import|use)$/.test(ops[1] ?? ''))
  )
    return change(`${prog} ${ops[0]} ${ops[1]}`);
  const changed = ops.find((o) => JFROG_CHANGES.test(o));
  return changed ? change(`${prog} ${ops.slice(0, ops.indexOf(changed) + 1).join(' ')}`) : read;
}

/**
 * Grizzly (`grr`) keeps Grafana's dashboards as code: applying, pushing, watching, snapshotting and
 * deleting change the Grafana server its context names; pulls, listings, gets, diffs and previews read
 * (a token stored by `config set` is judged as any tool's stored credential is).
 */
function readGrizzly(prog: string, args: Word[]): Reading {
  const [cmd = ''] = text(operands(args));
  if (/^(apply|push|watch|snapshot|delete)$/.test(cmd)) return change(`${prog} ${cmd}`);
  return read;
}

/**
 * Home Assistant's `ha` drives the Supervisor of the machine it runs on: its options, reloads,
 * restarts, updates, add-on installs and backups change that machine; info, logs and stats read.
 */
function readHomeAssistant(prog: string, args: Word[]): Reading {
  const ops = text(operands(args));
  return ops.length === 0 || /^(info|logs|stats|list|help|check|version)$/.test(ops[ops.length - 1]!) ? read : change(`${prog} ${ops.join(' ')}`);
}

/**
 * pyinfra runs its operations, commands and fact gathering over ssh on its inventory's hosts, or on
 * this machine (`@local`); containers it starts for the run (`@docker/ubuntu`) are its own, and a dry
 * run or the inventory's printout (`debug-inventory`) change nothing.
 */
const PYINFRA_VALUED =
  /^(--limit|--user|--key|--key-password|--port|--password|--sudo-user|--su-user|--data|--group-data|--config|--chdir|--parallel|--retry|--retry-delay)$/;
function readPyinfra(prog: string, args: Word[]): Reading {
  const [inventory = '', operation = ''] = text(operands(args, PYINFRA_VALUED));
  const changesNothing =
    !inventory || inventory.startsWith('@docker/') || operation === 'debug-inventory' || args.some((a) => /^(--dry|--help|-h|--version)$/.test(a.text));
  return changesNothing ? read : change(`${prog} ${inventory} ${operation}`.trim());
}

/**
 * Configuration management's agents and masters act on managed machines: a Chef run converges this node
 * to what its server says, Salt's master runs functions on its minions and accepts or rejects their keys;
 * a key listing and the tools' own questions read.
 */
const readSaltKey = (prog: string, args: Word[]): Reading =>
  args.some((a) => /^-[a-zA-Z]*[AaDdRr]|^--(accept|accept-all|delete|delete-all|reject|reject-all)$/.test(a.text))
    ? change(`${prog} ${text(args).join(' ')}`)
    : read;
const readConfigAgent = (prog: string, args: Word[]): Reading =>
  onlyAsksAbout(args) || args.some((a) => a.text === '--versions-report') ? read : change(`${prog} ${text(operands(args)).join(' ')}`.trim());
/**
 * Salt's and Puppet's daemons and local runs: `salt-call state.apply` and `puppet apply` converge this
 * machine as root, `puppet agent` to what its server says; the master, minion, API and syndic daemons serve
 * or obey the network. Their test runs that only report (`--noop`, `test=True`) and versions read.
 */
const readConfigDaemon = (prog: string, args: Word[]): Reading => {
  const rehearses = args.some((a) => /^(--noop|test=True|--versions-report)$/i.test(a.text));
  if (prog === 'puppet') {
    const [verb = ''] = text(operands(args));
    return /^(agent|apply|resource|cert|ssl|node|module)$/.test(verb) && !rehearses && !onlyAsksAbout(args) ? change(`${prog} ${verb}`) : read;
  }
  // salt-call's functions that only report (`grains.items`, `test.versions_report`, `state.show_sls`, `sys.doc`).
  const [fn = ''] = text(operands(args));
  const reports =
    prog === 'salt-call' && /^(grains\.(items|item|get|ls)|test\.\w+|sys\.\w+|state\.show_\w+|config\.get|pkg\.list_pkgs|service\.(status|get_all))$/.test(fn);
  return onlyAsksAbout(args) || rehearses || reports ? read : change(`${prog} ${fn}`.trim());
};

/**
 * Railway's CLI acts on the account's projects: `init` creates one, `up` and `redeploy` deploy, `run`
 * and `shell` run a command with the service's production variables, `variables`, `domain`, `link`,
 * `add` and `down` change them; its status, logs and listings read.
 */
const readRailway = (prog: string, args: Word[]): Reading => {
  const [verb = ''] = text(operands(args));
  return !verb || /^(status|logs|whoami|list|open|docs|help|version|completion)$/.test(verb) || onlyAsksAbout(args) ? read : change(`${prog} ${verb}`);
};

function embeddedClusterClient(prog: string, args: Word[], reads: RegExp): Reading {
  const [client = '', ...rest] = text(operands(args));
  const after = args.slice(args.findIndex((a) => a.text === client) + 1);
  if (client === 'kubectl') return readKubectl(`${prog} kubectl`, after);
  if (/^helm3?$/.test(client)) return readHelm(after);
  if (client === 'config' || client === 'kubeconfig') return secret(`${prog} ${client}`);
  if (client === 'ctr' || client === 'crictl') {
    // crictl reads by its verb (`crictl ps`); ctr by its group's verb (`ctr images ls`).
    const [first = '', second = ''] = rest;
    const reads =
      client === 'crictl'
        ? /^(version|info|ps|pods|images|img|inspect\w*|logs|stats\w*)$/.test(first)
        : /^(version|info)$/.test(first) || /^(ls|list|check|info)$/.test(second);
    return reads ? read : change(`${prog} ${client} ${rest.slice(0, 2).join(' ')}`);
  }
  return !client || reads.test(client) || onlyAsksAbout(args) ? read : change(`${prog} ${client}`);
}

const READERS: Readonly<Record<string, (prog: string, args: Word[], st: State) => Reading>> = {
  'ansible-playbook': readAnsiblePlaybook,
  rabbitmqadmin: readRabbitmqAdmin,
  'rabbitmqadmin-v1': readRabbitmqAdmin,
  ansible: readAnsibleAdHoc,
  'kolla-ansible': readKollaAnsible,
  openstack: readOpenStack,
  ...Object.fromEntries(
    ['nova', 'glance', 'neutron', 'cinder', 'barbican', 'designate', 'manila', 'ironic', 'magnum'].map((p) => [p, readOpenStackServiceClient]),
  ),
  railway: readRailway,
  pyinfra: readPyinfra,
  'salt-key': readSaltKey,
  salt: readConfigAgent,
  'salt-ssh': readConfigAgent,
  'chef-client': readConfigAgent,
  'chef-solo': readConfigAgent,
  ...Object.fromEntries(['salt-call', 'salt-master', 'salt-minion', 'salt-api', 'salt-syndic', 'puppet'].map((p) => [p, readConfigDaemon])),
  // Stratus Red Team runs attack techniques against the cloud account it is given: warming one up,
  // detonating, reverting and cleaning up create and change resources there; its listings read.
  stratus: (prog, args) => {
    const [cmd = ''] = text(operands(args));
    return /^(warmup|detonate|revert|cleanup)$/.test(cmd) ? change(`${prog} ${cmd}`) : read;
  },
  grr: readGrizzly,
  ha: readHomeAssistant,
  jf: readJfrog,
  jfrog: readJfrog,
  vault: readVault,
  // OpenBao, Vault's fork, takes the same commands.
  bao: readVault,
  amtool: readAmtool,
  doppler: readDoppler,
  aws: (_, args, st) => readAws(args, st),
  gcloud: readGcloud,
  gsutil: (_, args, st) => readGsutil(args, st),
  az: (_, args) => readAz(args),
  kubectl: readKubectl,
  oc: readKubectl,
  // `k` is the alias kubectl's own documentation suggests; read as kubectl only when a kubectl verb follows.
  k: (prog, args, st) => (KUBE_VERB.test(operands(args, KUBE_VALUED)[0]?.text ?? '') ? readKubectl(prog, args) : judgedAsUnknown(prog, args, st)),
  // kubectx and kubens switch the kubeconfig's current context or namespace, which every later kubectl
  // command uses; with no operand (or `-c`, `--current`) they list or print it.
  ...Object.fromEntries(
    ['kubectx', 'kubens'].map((p) => [
      p,
      (prog: string, args: Word[]) => (operands(args).length ? change(`${prog} ${args.map((a) => a.text).join(' ')}`) : read),
    ]),
  ),
  helm: (_, args) => readHelm(args),
  // MicroK8s, K3s and k0s carry their cluster's own kubectl, helm and containerd clients as subcommands,
  // read as those clients are; `microk8s config` prints the cluster's admin kubeconfig; enabling an
  // addon, joining a node or starting a server changes the cluster; status and inspection read.
  microk8s: (prog, args) => embeddedClusterClient(prog, args, /^(status|inspect|version|images|dashboard-proxy)$/),
  k3s: (prog, args) => embeddedClusterClient(prog, args, /^(check-config|--version|-v)$/),
  k0s: (prog, args) => embeddedClusterClient(prog, args, /^(status|version|sysinfo|help)$/),
  terraform: readTerraform,
  tofu: readTerraform,
  terragrunt: readTerraform,
  pulumi: (_, args) => readPulumi(args),
  // The Operator SDK installs OLM into the current cluster, runs a bundle there and cleans it up; its
  // other commands scaffold and build in the workspace.
  'operator-sdk': (prog, args) => {
    const [cmd = '', sub = ''] = text(operands(args, /^(--kubeconfig|-n|--namespace|--version|--timeout)$/));
    if ((cmd === 'olm' && /^(install|uninstall)$/.test(sub)) || (cmd === 'run' && /^(bundle|bundle-upgrade|packagemanifests)$/.test(sub)))
      return change(`${prog} ${cmd} ${sub}`);
    return cmd === 'cleanup' ? change(`${prog} cleanup`) : read;
  },
  cdk: (_, args) => readCdk(args),
  // Zowe's groups act on the mainframe its profile signs in to: defining, installing or refreshing CICS programs,
  // console commands, submitted jobs, uploads, Endevor's generates and updates, copies; listings, displays and
  // downloads read, as does Zowe's own configuration.
  zowe: (prog, args) => {
    const [group = '', action = ''] = text(operands(args));
    if (!group || /^(config|daemon|help)$/.test(group) || (group === 'plugins' && /^(list|validate)$/.test(action))) return read;
    return /^(list|ls|dis|display|get|view|download|dl|search|compare|check|status|show|query)$/.test(action) ? read : change(`${prog} ${group} ${action}`);
  },
  // Dokku's commands (`topic:verb`) create, configure, deploy and destroy the apps and services of the
  // server it runs on; its reports, listings and logs read, and an app's configuration printed holds its secrets.
  dokku: (prog, args) => {
    const [cmd = ''] = text(operands(args));
    if (/^config(:(show|get|export|bundle))?$/.test(cmd)) return secret(`${prog} ${cmd}`);
    return !cmd || /^(help|version|logs|report|[\w-]+:(report|list|info|logs|exists|help|inspect))$|^(apps|domains|ps|plugin)$/.test(cmd)
      ? read
      : change(`${prog} ${cmd}`);
  },
  // Pantheon's client (`topic:verb`, `secret:site:set`) creates, deploys, signs in to and runs commands on
  // the account's sites (`remote:drush`, `remote:wp`); its listings and info read. Robo's tasks named so
  // (`deploy:pantheon`) are judged by the same verbs.
  ...Object.fromEntries(['terminus', 'robo'].map((p) => [p, readByColonVerb])),
  // eksctl makes and changes EKS clusters in the AWS account; Argo Workflows' client submits and stops
  // workflows on the cluster it is pointed at.
  // Teleport's admin client adds join tokens, users and roles to the cluster it signs in to.
  // Pulsar's admin clients create, update and delete the clusters, tenants, topics and functions of the brokers they reach.
  // redc builds, starts, stops and runs commands on red-team machines in the cloud accounts it holds; its listings and plans read.
  // CodePush's clients release an app's update to every installed copy (`release-react`), patch or promote a release and make access keys.
  // Botasaurus' `bota` makes static IPs, clusters and VMs in the Google Cloud account and installs apps on them.
  // Convex's CLI deploys the project's functions, sets its deployment's variables and runs functions there.
  ...Object.fromEntries(
    [
      'doctl',
      'flyctl',
      'fly',
      'oci',
      'ibmcloud',
      'fission',
      'eksctl',
      'argo',
      'tctl',
      'uberspace',
      'pulsar-admin',
      'pulsarctl',
      'redc',
      'code-push',
      'code-push-standalone',
      'bota',
      'convex',
    ].map((p) => [p, readByFirstVerb]),
  ),
  // Artsy's hokusai drives a project's Kubernetes environments: an environment's `env get` prints its secrets and
  // `configure` writes the user's kubectl and hokusai settings; its local checks, tests, builds and dev stack stay here,
  // and its other words are read by the first verb (`production update` changes the deployment).
  hokusai: (prog, args) => {
    const ops = text(operands(args));
    const env = ops.indexOf('env');
    if (env >= 0 && ops[env + 1] === 'get') return secret(`${prog} env get`);
    if (ops[0] === 'configure') return change(`${prog} configure`);
    if (/^(check|test|build|dev|version|help)$/.test(ops[0] ?? '')) return read;
    return readByFirstVerb(prog, args);
  },
  // Pydio Cells' client (`cec`) moves and removes the files of the server it signs in to, and keeps its sign-in;
  // a copy up to it (`cec scp ./x cells://common-files/`) changes them, one down from it lands here.
  cec: (prog, args) => {
    const [cmd = '', ...rest] = text(operands(args));
    if (cmd === 'scp') return /^cells:?\/\//.test(rest.at(-1) ?? '') ? change(`${prog} scp`) : read;
    return readByFirstVerb(prog, args);
  },
  // The clients of hosted services act on the account they are signed in to, as the clouds' do: Cloudflare's
  // (its databases, stores, buckets and queues made, migrated or deleted), Fastly's, CircleCI's, New Relic's,
  // Algolia's, Kong's decK, AWX's (an Ansible controller's projects, jobs and credentials) and Cloudflare's
  // older ones (`cfcli purge`, `flarectl dns create`). Wrangler's
  // `--remote` reaches the deployed database or store whatever the verb; its `--local` the copy on this machine.
  ...Object.fromEntries(['fastly', 'circleci', 'newrelic', 'algolia', 'deck', 'awx', 'cfcli', 'flarectl'].map((p) => [p, readByFirstVerb])),
  wrangler: (prog, args) =>
    args.some((a) => a.text === '--local') ? read : args.some((a) => a.text === '--remote') ? change(`${prog} --remote`) : readByFirstVerb(prog, args),
  ...Object.fromEntries(['etcdctl', 'consul', 'nomad'].map((p) => [p, readCoordination])),
  ...Object.fromEntries(['s3cmd', 's5cmd', 'rclone', 'azcopy', 'b2', 'b2v4', 'mc'].map((p) => [p, readObjectStorage])),
  crane: readCrane,
  gcrane: readCrane,
  ...Object.fromEntries(Object.keys(DELIVERY).map((p) => [p, (prog: string, args: Word[]) => readDelivery(prog, args)])),
};

const remoteInfrastructure: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // A dry run changes nothing (`kubectl apply --dry-run=client`); helm's dependency commands fetch charts into the workspace.
  if (args.some((a) => /^--dry-run(=(client|server|true))?$/.test(a.text))) return;
  const r = READERS[prog]!(prog, args, st);
  if (r.kind === 'secret') danger(st, `reads a secret or a credential from the cloud or the cluster (${r.what})`);
  if (r.kind === 'change') danger(st, `changes infrastructure outside the sandbox with the user's credentials (${r.what})`);
};

/**
 * NATS' client keeps its contexts (a server, a user's credentials) in the home: adding, editing, removing
 * or selecting one changes what every later command reaches and as whom; its `auth` commands add, push
 * and select an operator's accounts and users and write their credentials. Listings, info, reports and
 * a server configuration generated here read; the rest is judged as any program's arguments are.
 */
const nats: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const [cmd = '', sub = '', verb = ''] = text(operands(args));
  if (cmd === 'context' && /^(add|edit|rm|select|import|copy)$/.test(sub))
    danger(st, `changes the user's NATS contexts, kept in the home (${prog} context ${sub})`);
  else if (cmd === 'auth' && sub !== '' && !/^(ls|list|info|show|help)?$/.test(verb))
    danger(st, `changes a NATS operator's accounts, users or their credentials (${prog} auth ${sub} ${verb})`);
  judgeUnknownProgram(prog, args, st);
};

/**
 * An IPFS node keeps its repository in the home (`~/.ipfs`): `init`, its configuration, files added,
 * pinned or published, mounts, and the daemon that joins the public network and serves what the node
 * holds change what the user's node keeps or shares. Reads of content, peers and the node's health do not.
 */
const IPFS_READS =
  /^(cat|get|ls|id|version|help|stats|diag|refs|resolve|dns|cid|commands|swarm (addrs|peers)|dag (get|stat)|block (get|stat)|files (ls|read|stat))$/;
const ipfs: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const ops = text(operands(args));
  if (ops.length && !IPFS_READS.test(ops[0]!) && !IPFS_READS.test(ops.slice(0, 2).join(' ')))
    danger(st, `changes the user's IPFS node, kept in the home, or what it serves to the network (${prog} ${ops[0]})`);
  judgeUnknownProgram(prog, args, st);
};

/**
 * Kolla's password tools write the deployment's generated passwords where `-p` / `--final` say, else
 * into /etc/kolla/passwords.yml, which every host of the deployment reads.
 */
const kollaPasswords: Rule = ({ prog, args, st }) => {
  const target = optionValue(args, prog === 'kolla-mergepwd' ? /^--final$/ : /^(-p|--passwords)$/);
  if (target) checkWriteTarget(word(target), st, "writes the deployment's passwords to");
  else if (!onlyAsksAbout(args)) danger(st, `writes the deployment's passwords to /etc/kolla/passwords.yml, outside the workspace (${prog})`);
};

/** A kubectl plugin run by its own name (`kubectl-debug POD`, `kubectl-node_shell node1`), read as kubectl runs it; alone, it prints its usage. */
const kubectlPlugin: Rule = (c) => {
  if (c.args.length) remoteInfrastructure({ ...c, prog: 'kubectl', args: [word(c.prog.slice('kubectl-'.length).replace(/_/g, '-')), ...c.args] });
};

export const CLOUD_RULES: RuleTable = {
  programs: {
    ...Object.fromEntries(Object.keys(READERS).map((p) => [p, remoteInfrastructure])),
    nats,
    ipfs,
    'kolla-genpwd': kollaPasswords,
    'kolla-mergepwd': kollaPasswords,
  },
  patterns: [[/^kubectl-[a-z][\w-]*$/, kubectlPlugin]],
};
