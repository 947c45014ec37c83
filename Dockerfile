# syntax=docker/dockerfile:1
# webhookd on Debian 12 (bookworm): a build stage and a slim runtime stage.
#
#   docker build -t webhookd .
#   docker run --rm -e DATABASE_URL=... webhookd migrate
#   docker run --rm -e DATABASE_URL=... -e WEBHOOKD_ADDR=0.0.0.0:8080 -p 8080:8080 webhookd server

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config g++ nodejs npm ca-certificates \
      libpqxx-dev libcpp-httplib-dev libboost-dev nlohmann-json3-dev libssl-dev libcurl4-openssl-dev \
      libre2-dev libhiredis-dev librabbitmq-dev libnats-dev librdkafka-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . /src
# Built out of the source tree, so a host's build/ or build-test/ in the context
# cannot get in the way.
RUN cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DWEBHOOKD_TESTS=OFF \
 && cmake --build /build -j"$(nproc)" \
 && strip /build/webhookd

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpqxx-6.4 libcpp-httplib0.11 libssl3 libcurl4 libre2-9 libhiredis0.14 librabbitmq4 libnats3.4 librdkafka1 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 webhookd \
 && useradd --system --uid 10001 --gid webhookd --no-create-home \
      --home-dir /app --shell /usr/sbin/nologin webhookd
WORKDIR /app
COPY --from=build /build/webhookd /app/webhookd
COPY --from=build /src/migrations /app/migrations
USER 10001:10001
# In a container the loopback defaults would be unreachable from outside.
ENV WEBHOOKD_ADDR=0.0.0.0:8080 \
    WEBHOOKD_WORKER_ADDR=0.0.0.0:9090
EXPOSE 8080 9090
ENTRYPOINT ["/app/webhookd"]
CMD ["all"]
