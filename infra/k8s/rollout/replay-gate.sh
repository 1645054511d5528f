#!/usr/bin/env bash
# Rollout gate for a new agentrun worker image, run by CI before the rolling update:
#
#   infra/k8s/rollout/replay-gate.sh registry.example.com/agentrun:1.4.0 && \
#     kubectl -n agentrun set image statefulset/agentrun-worker worker=registry.example.com/agentrun:1.4.0
#
# Replays the histories of running conversations, pulled from the Temporal server, against the
# workflow code in IMAGE (`agentrun replay --from-server`). Exit 0: safe to roll out. Exit 1:
# nondeterminism (or the replay could not run) — do not roll out; docs/deploy.md says what next.
# Needs kubectl (with kustomize) and access to the agentrun namespace.
set -euo pipefail

IMAGE="${1:?usage: replay-gate.sh IMAGE[:TAG]}"
NAMESPACE="${AGENTRUN_K8S_NAMESPACE:-agentrun}"
TIMEOUT="${REPLAY_GATE_TIMEOUT:-1800}"
JOB=agentrun-replay-gate
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# A temporary overlay sets the image under test; the checked-in files stay as they are.
overlay="$(mktemp -d "${HERE}/.overlay.XXXXXX")"
trap 'rm -rf "$overlay"' EXIT
name="$IMAGE"; ref=""
if [[ "$IMAGE" == *@* ]]; then
  name="${IMAGE%@*}"; ref="  digest: ${IMAGE#*@}"
elif [[ "${IMAGE##*/}" == *:* ]]; then
  name="${IMAGE%:*}"; ref="  newTag: \"${IMAGE##*:}\""
fi
cat > "$overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../gate
images:
- name: agentrun
  newName: ${name}
${ref}
YAML

kubectl -n "$NAMESPACE" delete job "$JOB" --ignore-not-found --wait=true
kubectl kustomize "$overlay" | kubectl -n "$NAMESPACE" apply -f -

echo "replay gate: waiting for job/${JOB} (image ${IMAGE})"
deadline=$((SECONDS + TIMEOUT))
status=""
while [ "$SECONDS" -lt "$deadline" ]; do
  succeeded="$(kubectl -n "$NAMESPACE" get job "$JOB" -o jsonpath='{.status.succeeded}')"
  failed="$(kubectl -n "$NAMESPACE" get job "$JOB" -o jsonpath='{.status.failed}')"
  if [ "${succeeded:-0}" -ge 1 ]; then status=passed; break; fi
  if [ "${failed:-0}" -ge 1 ]; then status=failed; break; fi
  sleep 5
done

kubectl -n "$NAMESPACE" logs "job/${JOB}" --all-containers --tail=-1 || true

case "$status" in
  passed) echo "replay gate PASSED: ${IMAGE} replays every running conversation"; exit 0 ;;
  failed) echo "replay gate FAILED: ${IMAGE} is not compatible with histories in flight" >&2; exit 1 ;;
  *)      echo "replay gate TIMED OUT after ${TIMEOUT}s" >&2; exit 1 ;;
esac
