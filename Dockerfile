# warpwatch collector / estimator image (deploy/compose.yaml, deploy/k8s/).
#   docker build -t warpwatch:local .
#   docker run --rm warpwatch:local collect --help
# The CLI runs the TypeScript sources through tsx (a runtime dependency): the services start once,
# so the compiled CLI (dist/, for fast interactive starts) is not needed here; --ignore-scripts
# skips `prepare`, which builds it (and whose build tools are dev dependencies).
FROM node:22-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production
# glibc malloc at 2 arenas: less RSS for the services (deploy/contracts.ts IMAGE_PROCESS_ENV).
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY cli ./cli
COPY analysis ./analysis
COPY model ./model
COPY contracts ./contracts
COPY protocol ./protocol
COPY collector ./collector
COPY service ./service
COPY estimator ./estimator
COPY dashboards ./dashboards
# The CLI imports kernels/ (the workload runner) when it loads; the image has no compiler, so `run`
# and `demo` need a mounted build, but every command starts. test/integration/docker-image.int.test.ts
# assembles the image from these COPY lines and runs the CLI from it.
COPY kernels ./kernels
# Collector socket and spool folders, writable by the unprivileged node user.
RUN mkdir -p /run/warpwatch /var/lib/warpwatch/spool && chown -R node:node /run/warpwatch /var/lib/warpwatch
USER node
# collector /metrics + /healthz, estimator /metrics + /healthz
EXPOSE 9464 9465
ENTRYPOINT ["node", "bin/warpwatch.mjs"]
CMD ["--help"]
