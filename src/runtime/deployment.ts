// Worker Versioning's first deploy. A versioned worker only receives tasks of its deployment's
// current version, and a new deployment has none: until someone runs `set-current-version`, new
// conversations would wait. So the first build of a deployment makes itself current, once its
// pollers have registered it; every later build stays a candidate until the rollout promotes it
// (docs/deploy.md, "Versioned workers"). The conflict token makes two first workers agree.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';

export interface DeploymentVersion {
  name: string;
  buildId: string;
}

/** What adoption found: this build made current, another version already current, or gave up. */
export type Adoption = 'adopted' | 'has-current' | 'timed-out';

const POLL_MS = 500;

/**
 * Make `version` the current version of its deployment when the deployment has none yet. Waits
 * (up to `timeoutMs`) for the worker's pollers to register the version, as the server refuses to
 * route to a version it has not seen.
 */
export async function adoptAsFirstVersion(client: Client, version: DeploymentVersion, log: Logger, timeoutMs = 60_000): Promise<Adoption> {
  const { namespace } = client.options;
  const service = client.workflowService;
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const described = await service.describeWorkerDeployment({ namespace, deploymentName: version.name });
      const info = described.workerDeploymentInfo;
      const current = info?.routingConfig?.currentDeploymentVersion?.buildId || info?.routingConfig?.currentVersion;
      if (current && current !== '__unversioned__') return 'has-current';
      const registered = (info?.versionSummaries ?? []).some((v) => v.deploymentVersion?.buildId === version.buildId);
      if (registered) {
        await service.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.name,
          buildId: version.buildId,
          conflictToken: described.conflictToken,
          identity: `agentrun worker ${version.buildId}`,
        });
        log.info({ deployment: version.name, buildId: version.buildId }, 'first version of the deployment: made it current');
        return 'adopted';
      }
    } catch (err) {
      // Not found yet (no poller registered the deployment), or another first worker won the conflict token: look again.
      log.debug({ err: (err as Error).message }, 'deployment not ready for adoption yet');
    }
    if (Date.now() > until) {
      log.warn(
        { deployment: version.name, buildId: version.buildId },
        'could not make this first version current; run `temporal worker deployment set-current-version` or new conversations wait',
      );
      return 'timed-out';
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
