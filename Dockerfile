# syntax=docker/dockerfile:1
# One image for every Slipway service; the command picks the service:
#   node apps/gateway/dist/main.js | apps/auth-service | apps/edge | apps/build-worker
#   node apps/launcher/dist/migrate.js   (platform migrations, run before the services)
# (apps/runtime-supervisor is started by the launcher only, under `pnpm start`: the compose and
# Kubernetes edges run without it, the local driver in the edge or the kubernetes driver.)

# ---- build: install from the lockfile, build every project, keep production deps only ----
FROM node:20-bookworm-slim AS build
# python3/make/g++ build native addons (bcrypt) from source when no prebuild fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@10.34.9
ENV CI=true NX_DAEMON=false NX_NO_CLOUD=true PNPM_HOME=/pnpm
WORKDIR /app
# Fetch packages from the lockfile alone first, so this layer survives source edits.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline
RUN pnpm build
# Drop devDependencies: `install --prod` unlinks them (the root postinstall skips `prisma
# generate` once prisma is gone; the generated client is already compiled into libs/platform-schema/dist),
# `prune --prod` deletes them from the virtual store (~790 MB -> ~415 MB).
RUN pnpm install --frozen-lockfile --offline --prod \
 && pnpm prune --prod \
 && rm -rf .nx node_modules/.cache

# ---- runtime -------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
# bubblewrap + passt (pasta): the build worker's sandbox for install/build commands (its own
# network namespace joined to the outside by pasta; the container needs /dev/net/tun and user
# namespaces, or builds fail with sandbox_unavailable). tini: PID 1 that forwards SIGTERM and
# reaps the build commands' children. nginx-light + the brotli_static module: the edge's nginx
# data plane (EDGE_DATA_PLANE=nginx, what `pnpm start` uses; the k8s manifests run the edge with
# EDGE_DATA_PLANE=node, see k8s/README.md); Debian's own nginx service is never started.
# pgbouncer: what `pnpm start` (the launcher) runs in front of the applications' databases.
# nftables + iproute2: the runtime sandbox's kernel network path (veth pairs; RUNTIME_NETWORK=auto
# falls back to pasta where the container may not create them: apps/edge/README.md).
# e2fsprogs + mount: each build's fixed-size disk (BUILD_DISK_MB; needs root and loop devices, so
# the unprivileged containers here set BUILD_DISK_MB=0 and carry the unbounded_build_disk hazard).
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap passt tini ca-certificates git nginx-light libnginx-mod-http-brotli-static e2fsprogs mount pgbouncer nftables iproute2 \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 slipway \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/slipway --shell /usr/sbin/nologin slipway \
 && mkdir -p /var/lib/slipway \
 && chown 10001:10001 /var/lib/slipway
ENV NODE_ENV=production SLIPWAY_HOME=/var/lib/slipway
WORKDIR /app
# Owned by root and not writable by the service user: the code cannot be changed at run time.
COPY --from=build /app /app
USER 10001:10001
EXPOSE 3000 3001 3003 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/gateway/dist/main.js"]
