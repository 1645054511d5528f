// Clients of remote infrastructure: cloud CLIs, infrastructure as code, clusters. They act with the
// credentials of whoever runs them on machines, buckets and clusters outside the sandbox, so a verb
// that changes something there (delete, apply, destroy, create, put-…) is dangerous; reading
// (list, describe, get, plan, show) is not. The verb is the first operand that is one of either
// kind, so a resource named like a verb after a reading one (`kubectl get deploy`) stays a name.
import { danger, operands, type Rule, type RuleTable } from '../state.js';

/** Verbs that only read (aws's `describe-instances`, gcloud's `list`, terraform's `plan`). */
const READS =
  /^(list|ls|describe|get|show|plan|validate|fmt|version|help|output|graph|providers|head|wait|presign|logs|top|explain|diff|status|whoami|info|template|lint|search|preview|api-resources|api-versions|cluster-info|view|history)([-_].*)?$/;
/** Verbs that change something remote, or the client's own credentials and settings. */
const CHANGES =
  /^(apply|destroy|import|taint|untaint|force-unlock|refresh|up|delete|rm|rb|mv|cp|sync|mb|create|update|deploy|put|set|add|remove|start|stop|restart|reset|resize|terminate|reboot|run|exec|ssh|scp|scale|patch|replace|rollout|drain|cordon|uncordon|label|annotate|edit|install|uninstall|upgrade|rollback|login|invoke|publish|attach|detach|modify|enable|disable|purge|cancel|promote|push|release|revoke|authorize|assign|grant|register|deregister|tag|untag|restore|copy|move|port-forward|proxy)([-_].*)?$/;

const remoteInfrastructure: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  // A dry run changes nothing (`kubectl apply --dry-run=client`); helm's dependency commands fetch charts into the workspace.
  if (args.some((a) => /^--dry-run(=(client|server|true))?$/.test(a.text))) return;
  const ops = operands(args);
  if (prog === 'helm' && /^(dependency|dep)$/.test(ops[0]?.text ?? '')) return;
  for (const o of ops) {
    if (READS.test(o.text)) return;
    if (CHANGES.test(o.text)) return danger(st, `changes infrastructure outside the sandbox with the user's credentials (${prog} ${o.text})`);
  }
};

export const CLOUD_RULES: RuleTable = {
  programs: Object.fromEntries(
    ['aws', 'gcloud', 'gsutil', 'az', 'terraform', 'tofu', 'terragrunt', 'pulumi', 'kubectl', 'helm', 'doctl', 'flyctl', 'heroku', 'oci', 'ibmcloud'].map(
      (p) => [p, remoteInfrastructure],
    ),
  ),
};
