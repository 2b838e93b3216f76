# syntax=docker/dockerfile:1
#
# connect-init in front of a Kafka Connect worker.
#
# Three images from one file, and a minimal one; the builder stages are
# shared:
#
#   docker build -t connect-init/cp-kafka-connect .                      # confluent (default, last stage)
#   docker build --target debezium -t connect-init/debezium-connect .
#   docker build --target apache   -t connect-init/kafka-connect .
#   docker build --target release  -t connect-init/release .            # FROM scratch: the binary and the jar only
#
# The release image holds /connect-init and /connect-init-provider.jar and
# nothing else, for `COPY --from=connect-init/release ...` into an image of
# your own (docs/containers.md).
#
# Build arguments: VERSION (stamped into `connect-init version`, e.g.
# --build-arg VERSION=$(git describe --tags --always); the context leaves
# .git out, so without it the binary reports "(devel)" and no commit: a
# binary of make release reports both from its build information),
# GO_VERSION, MAVEN_IMAGE; the base image of each target,
# CP_BASE, DEBEZIUM_BASE and KAFKA_BASE (the vendors' images by default, of
# CP_VERSION, DEBEZIUM_VERSION and KAFKA_VERSION; the container tests build
# these very targets on their stand-ins); and RELEASE, the image the
# targets take the binary and the jar from: the release stage below, built
# from this source, by default, or any image laid out like it, such as a
# published connect-init/release (docker build --build-arg
# RELEASE=connect-init/release:v1.2.3 --target debezium .), so that no Go
# or Maven build runs.
#
# Each target also installs the in-worker startup lock's ConfigProvider
# (java/connect-init-provider, 7 KB, no dependency but the worker's own
# kafka-clients) in the directory the image's launcher puts on the worker's
# classpath; connect-init finds it there (CONNECT_INIT_LOCK_MODE=auto), so
# every JVM starts and scans its plugins at once and only the group join
# waits its turn.
#
# Every target keeps the base image's own start command as CMD and puts
# connect-init in front of it: `connect-init run -- CMD` runs the gates
# (brokers, internal topics, worker group, startup lock, peers) and then
# execs CMD, so the worker is PID 1 as before. The HEALTHCHECK is
# `connect-init healthcheck`: healthy only once the worker has joined its
# group and serves requests (GET / and /connectors answer even while a
# worker loops on rebalances, so curl-based checks cannot see incident 1).
#
# Health timings, the same in every target: start-period covers the steps
# before the startup lock (bounded together by CONNECT_INIT_TIMEOUT, default
# 5m; the peers step after the lock gets one of its own; the wait in the lock
# queue is not counted, at most about position x CONNECT_INIT_LOCK_LEASE)
# plus the worker's own start; raise it with the timeout, the number of
# workers and the lease.

ARG GO_VERSION=1.26
# Confluent Platform 7.9 = Apache Kafka 3.9, the first with GET /health.
ARG CP_VERSION=7.9.0
ARG DEBEZIUM_VERSION=3.0
ARG KAFKA_VERSION=4.0.0
ARG MAVEN_IMAGE=maven:3.9-eclipse-temurin-17
ARG CP_BASE=confluentinc/cp-kafka-connect:${CP_VERSION}
ARG DEBEZIUM_BASE=quay.io/debezium/connect:${DEBEZIUM_VERSION}
ARG KAFKA_BASE=apache/kafka:${KAFKA_VERSION}
ARG RELEASE=release

# ---------------------------------------------------------------------------
# build: a static binary (CGO_ENABLED=0), so it runs unchanged on UBI (the
# Confluent and Debezium images) and on Alpine (apache/kafka).
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/connect-init ./cmd/connect-init

# ---------------------------------------------------------------------------
# provider: the in-worker lock's ConfigProvider jar (Java 17, kafka-clients
# provided).
FROM --platform=$BUILDPLATFORM ${MAVEN_IMAGE} AS provider
WORKDIR /src
COPY java/connect-init-provider/ ./
RUN --mount=type=cache,target=/root/.m2 \
    mvn -q -B -Dstyle.color=never package && \
    mkdir -p /out && cp target/connect-init-provider.jar /out/

# ---------------------------------------------------------------------------
# release: the binary and the jar alone, FROM scratch, for COPY --from=.
FROM scratch AS release
COPY --from=build /out/connect-init /connect-init
COPY --from=provider /out/connect-init-provider.jar /connect-init-provider.jar

# ---------------------------------------------------------------------------
# dist: where the targets below take the binary and the jar from (ARG
# RELEASE): the release stage, or a prebuilt release image. The container
# tests build every stage from here on, on their stand-ins.
FROM ${RELEASE} AS dist

# ---------------------------------------------------------------------------
# debezium: quay.io/debezium/connect (Docker Hub's debezium/connect stopped
# at 2.x). Its image runs ENTRYPOINT ["/docker-entrypoint.sh"] CMD ["start"]
# as user kafka (uid 1001).
#
# /docker-entrypoint.sh *overwrites* CONNECT_BOOTSTRAP_SERVERS,
# CONNECT_GROUP_ID, CONNECT_*_STORAGE_TOPIC and CONNECT_REST_ADVERTISED_*
# from its own unprefixed variables (BOOTSTRAP_SERVERS, GROUP_ID,
# CONFIG_STORAGE_TOPIC, ADVERTISED_HOST_NAME, ...; GROUP_ID defaults to 1)
# and maps CONNECT_* names with a plain _ -> . rule. connect-init detects
# the image from that entrypoint (flavour debezium) and reads the settings
# exactly as it does: Debezium's own variables alone are enough.
FROM ${DEBEZIUM_BASE} AS debezium
COPY --from=dist /connect-init /usr/local/bin/connect-init
COPY --from=dist /connect-init-provider.jar /kafka/libs/connect-init-provider.jar
RUN ["connect-init", "version"]
USER kafka
ENTRYPOINT ["connect-init", "run", "--"]
CMD ["/docker-entrypoint.sh", "start"]
HEALTHCHECK --interval=10s --timeout=10s --start-period=6m --retries=6 \
    CMD ["connect-init", "healthcheck"]

# ---------------------------------------------------------------------------
# apache: apache/kafka (Alpine, user appuser) ships bin/connect-distributed.sh
# but no Connect launcher, and nothing in it reads CONNECT_* variables: the
# worker reads only the properties file named on its command line. Mount
# that file (a ConfigMap, Swarm config or bind mount) at the path below;
# CONNECT_INIT_WORKER_CONFIG points connect-init at the same file so both
# see one configuration. Do not set CONNECT_* variables with this image:
# connect-init would apply them on top of the file, Connect would not.
FROM ${KAFKA_BASE} AS apache
COPY --from=dist /connect-init /usr/local/bin/connect-init
COPY --from=dist /connect-init-provider.jar /opt/kafka/libs/connect-init-provider.jar
RUN ["connect-init", "version"]
ENV CONNECT_INIT_WORKER_CONFIG=/etc/kafka-connect/worker.properties
USER appuser
EXPOSE 8083
ENTRYPOINT ["connect-init", "run", "--"]
CMD ["/opt/kafka/bin/connect-distributed.sh", "/etc/kafka-connect/worker.properties"]
HEALTHCHECK --interval=10s --timeout=10s --start-period=6m --retries=6 \
    CMD ["connect-init", "healthcheck"]

# ---------------------------------------------------------------------------
# confluent (default): confluentinc/cp-kafka-connect runs
# CMD ["/etc/confluent/docker/run"] as appuser (uid 1000). Its own
# HEALTHCHECK (curl /connectors) is replaced by connect-init's.
FROM ${CP_BASE} AS confluent
COPY --from=dist /connect-init /usr/local/bin/connect-init
COPY --from=dist /connect-init-provider.jar /usr/share/java/kafka/connect-init-provider.jar
RUN ["connect-init", "version"]
USER appuser
ENTRYPOINT ["connect-init", "run", "--"]
CMD ["/etc/confluent/docker/run"]
HEALTHCHECK --interval=10s --timeout=10s --start-period=6m --retries=6 \
    CMD ["connect-init", "healthcheck"]
