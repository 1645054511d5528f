# agentrun worker image.
#   docker build -t agentrun:dev .
#   docker run --rm --env-file .env agentrun:dev worker          (default command)
#   docker run --rm --env-file .env agentrun:dev replay --from-server
# The build stage compiles TypeScript to dist/ (npm run build); the runtime image holds dist/,
# bin/agentrun.js and production dependencies only (no tsx, no TypeScript).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- deps: production node_modules ----------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NODE_ENV=production \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
# Install without running any package's install script, then run only the scripts of the
# packages the project allows (package.json "allowScripts"). Same result with npm 10 (the
# one node:20 ships) and npm 11 (which enforces allowScripts itself).
# hadolint ignore=SC2086
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts \
 && allowed="$(node -p "Object.entries(require('./package.json').allowScripts ?? {}).filter(([, v]) => v).map(([k]) => k).filter((k) => require('node:fs').existsSync('node_modules/' + k)).join(' ')")" \
 && if [ -n "$allowed" ]; then npm rebuild $allowed; fi

# ---- build: compile to dist/ with the dev dependencies ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# hadolint ignore=SC2086
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts \
 && allowed="$(node -p "Object.entries(require('./package.json').allowScripts ?? {}).filter(([, v]) => v).map(([k]) => k).filter((k) => require('node:fs').existsSync('node_modules/' + k)).join(' ')")" \
 && if [ -n "$allowed" ]; then npm rebuild $allowed; fi
COPY . .
# .git stays out of the build context: pass the commit (docker build --build-arg AGENTRUN_COMMIT=$(git rev-parse --short=12 HEAD)).
ARG AGENTRUN_COMMIT=
RUN AGENTRUN_COMMIT="${AGENTRUN_COMMIT}" npm run build

# ---- runtime ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# git: workspaces and checkpoints; bash: execute_command; bubblewrap: the sandbox around every
# command (the worker refuses to start without it unless --sandbox off); tini: PID 1 that
# forwards SIGTERM to node and reaps the orphans of commands the agent runs. Versions come from the pinned
# Debian release of the base image (exact apt pins break when the mirror moves on).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bash bubblewrap ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*

ARG AGENTRUN_UID=10001
RUN groupadd --gid "${AGENTRUN_UID}" agentrun \
 && useradd --uid "${AGENTRUN_UID}" --gid agentrun --home-dir /home/agentrun --create-home --shell /bin/bash agentrun \
 && mkdir -p /var/lib/agentrun/workspaces /var/lib/agentrun/home \
 && chown -R agentrun:agentrun /var/lib/agentrun

WORKDIR /app
ENV NODE_ENV=production \
    AGENTRUN_HOME=/var/lib/agentrun/home \
    AGENTRUN_WORKSPACES=/var/lib/agentrun/workspaces \
    GIT_TERMINAL_PROMPT=0

# Application files stay owned by root: the worker cannot modify its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin/agentrun.js ./bin/
COPY --from=build /app/dist ./dist

# Workspaces and AGENTRUN_HOME live under /var/lib/agentrun: mount a volume there
# (docker-compose.yml and infra/k8s do).
USER ${AGENTRUN_UID}:${AGENTRUN_UID}
# Prometheus metrics (/metrics) and health (/healthz) of `agentrun worker`.
EXPOSE 9464

STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/agentrun.js"]
CMD ["worker"]
