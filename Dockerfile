# syntax=docker/dockerfile:1
#
# cloudtally's image: built with the dev dependencies, run on a slim Node LTS image with only the
# production dependencies, the compiled dist/, the migrations, the views and the static files.
#
#   docker build -t cloudtally .
#   docker run -p 3000:3000 cloudtally                    # demo: built-in simulator, embedded PGlite
#   docker compose up -d                                  # production: with Postgres (docker-compose.yml)
#
# No secret is baked in: the API key, DATABASE_URL and tokens come from the environment at run time.
#
# scripts/image-steps.mjs replays this file in a clean folder (COPY, WORKDIR, ENV, RUN, then the
# CMD and the HEALTHCHECK) and test/ops/image-steps.test.ts runs it in CI: so keep every RUN a plain
# command with relative paths, and keep the build itself in package.json's scripts (`npm run build`).

# Node 24: an LTS line (supported until April 2028) that runs everything this project uses
# (package.json engines: >=20.18.1). Bump it here; nothing else names the version.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build
# An empty folder for the runtime's data (PGlite), copied below with the runtime user as owner.
RUN mkdir -p data

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# A 32 MB young generation (V8's default is 16 MB): a collection parses and writes hundreds of MB of
# short-lived objects, and scavenging them was a third of its CPU (see README, Performance).
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 NODE_OPTIONS="--enable-source-maps --max-semi-space-size=64"
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# The data folder a new PGlite database starts from (src/db/pglite-template.ts).
COPY pglite ./pglite
COPY views ./views
COPY public ./public
# The only writable place: the embedded database when DATABASE_URL is not set (mount a volume here).
COPY --from=build --chown=node:node /app/data ./data
# The code stays owned by root, so the service (user `node`, uid 1000, from the base image) cannot change it.
USER node
EXPOSE 3000
# /healthz answers 200 while the process is up; node does the probe (slim images have no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/ops/healthcheck.js"]
CMD ["node", "dist/cli.js", "start"]
