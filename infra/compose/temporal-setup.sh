#!/bin/sh
# One-shot (temporalio/admin-tools image, or anywhere the `temporal` CLI is installed):
# waits for the Temporal frontend, makes sure the namespace exists and registers agentrun's
# custom search attributes on it. Idempotent: re-running it changes nothing.
#
# Uses the CLI's own environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, and for a secured
# cluster TEMPORAL_API_KEY / TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_PATH.
#   CREATE_NAMESPACE=false   skip namespace creation (namespace managed elsewhere)
#   NAMESPACE_RETENTION=7d   retention of closed conversations' histories
#
# The list below must match src/search-attributes.ts (SEARCH_ATTRIBUTES).
set -eu

export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${NAMESPACE_RETENTION:-7d}"
ATTEMPTS="${SETUP_ATTEMPTS:-60}"

SEARCH_ATTRIBUTES="
AgentrunStatus=Keyword
AgentrunWorkspace=Keyword
AgentrunModel=Keyword
AgentrunTurns=Int
AgentrunCostUsd=Double
AgentrunSchedule=Keyword
"

retry() { # retry DESCRIPTION COMMAND...
  what="$1"; shift
  n=1
  until "$@"; do
    [ "$n" -lt "$ATTEMPTS" ] || { echo "giving up: ${what}" >&2; return 1; }
    echo "not yet: ${what} (attempt ${n}/${ATTEMPTS})"
    n=$((n + 1)); sleep 2
  done
}

echo "waiting for Temporal at ${TEMPORAL_ADDRESS}"
retry "cluster health" sh -c 'temporal operator cluster health 2>/dev/null | grep -q SERVING'

if temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
  echo "namespace ${TEMPORAL_NAMESPACE} exists"
elif [ "${CREATE_NAMESPACE:-true}" = "true" ]; then
  echo "creating namespace ${TEMPORAL_NAMESPACE} (retention ${RETENTION})"
  retry "namespace create" temporal operator namespace create \
    --namespace "$TEMPORAL_NAMESPACE" --retention "$RETENTION"
  retry "namespace visible" sh -c 'temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1'
else
  echo "namespace ${TEMPORAL_NAMESPACE} does not exist and CREATE_NAMESPACE=false" >&2
  exit 1
fi

# A new namespace takes a few seconds to reach every server cache: retry the first list.
list_search_attributes() {
  temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" > /tmp/search-attributes.txt
}
retry "search attribute list" list_search_attributes
existing="$(cat /tmp/search-attributes.txt)"
for pair in $SEARCH_ATTRIBUTES; do
  name="${pair%%=*}"; type="${pair##*=}"
  if printf '%s\n' "$existing" | grep -Eq "^[[:space:]]*${name}[[:space:]]+${type}[[:space:]]*$"; then
    echo "search attribute ${name} (${type}) already registered"
    continue
  fi
  echo "registering search attribute ${name} (${type})"
  # Fails loudly if the name exists with a different type: that needs a person.
  temporal operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" --name "$name" --type "$type"
done
echo "namespace ${TEMPORAL_NAMESPACE} is ready for agentrun"
