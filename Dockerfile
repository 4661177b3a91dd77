# syntax=docker/dockerfile:1
#
# vehicle-command-proxy: the signing proxy as a sidecar image.
#
#   docker build -t vcproxy .
#   docker run --rm -p 4443:4443 \
#     -v "$PWD/keys/private-key.pem:/keys/private-key.pem:ro" \
#     -v "$PWD/tls:/tls:ro" \
#     vcproxy
#
# Mounted at run time, never baked into the image (.dockerignore also keeps them out of
# the build context):
#   /keys/private-key.pem   the command private key (VCPROXY_KEY). The proxy refuses a key
#                           file readable by group/others: on the host, `chmod 600` it and
#                           make it readable by uid 10001 (`chown 10001 private-key.pem`),
#                           or use your orchestrator's secret mount with mode 0400 and
#                           owner 10001.
#   /tls/cert.pem, /tls/key.pem
#                           the listener's TLS certificate and key (VCPROXY_TLS_CERT /
#                           VCPROXY_TLS_KEY). Behind a TLS terminator instead, set
#                           VCPROXY_TLS_CERT= VCPROXY_TLS_KEY= (empty) and
#                           VCPROXY_ALLOW_INSECURE_HTTP=true.
# Everything else is configured with VCPROXY_* variables or flags appended to
# `docker run … vcproxy --flag value` (see `vcproxy serve --help`). Change the port and TLS
# files through VCPROXY_PORT / VCPROXY_TLS_* rather than flags: the HEALTHCHECK reads them.

ARG NODE_VERSION=20

# ---- build: compile TypeScript, then drop dev dependencies -------------------------------
FROM node:${NODE_VERSION}-alpine AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ scripts/
COPY proto/ proto/
COPY src/ src/
COPY bin/ bin/
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && test -f dist/cli.js

# ---- runtime: node + compiled code + production dependencies only ------------------------
FROM node:${NODE_VERSION}-alpine AS runtime
ENV NODE_ENV=production \
    VCPROXY_HOST=0.0.0.0 \
    VCPROXY_PORT=4443 \
    VCPROXY_KEY=/keys/private-key.pem \
    VCPROXY_TLS_CERT=/tls/cert.pem \
    VCPROXY_TLS_KEY=/tls/key.pem
# A fixed numeric uid/gid so orchestrators can verify runAsNonRoot and so mounted secrets
# can be owned by it.
RUN addgroup -S -g 10001 vcproxy \
 && adduser -S -D -H -u 10001 -G vcproxy -s /sbin/nologin vcproxy \
 && mkdir -p /keys /tls \
 && chown root:root /keys /tls
WORKDIR /app
# Code stays owned by root and read-only for the runtime user: a compromised process
# cannot rewrite the proxy.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/bin ./bin
USER 10001:10001
EXPOSE 4443
# Liveness through node itself (no curl in the image). The probe talks to loopback, where
# the certificate's host name cannot match, so it does not verify the certificate; it only
# asks whether /health answers 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const t=!!process.env.VCPROXY_TLS_CERT;const m=require(t?'node:https':'node:http');const r=m.get({host:'127.0.0.1',port:Number(process.env.VCPROXY_PORT||4443),path:'/health',rejectUnauthorized:false,timeout:4000},s=>process.exit(s.statusCode===200?0:1));r.on('error',()=>process.exit(1));r.on('timeout',()=>{r.destroy();process.exit(1)})"]
# SIGTERM starts a graceful drain (in-flight commands finish); give the container a stop
# timeout longer than the drain grace period (e.g. `docker stop -t 30`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js", "serve"]
CMD []
