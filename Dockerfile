# posts-server in a container: built with the Swift image, run on a slim Debian with only
# libpq5, libcurl4 (the mailer's SMTP) and libvips42 (images) added (zlib1g, for gzip, is
# in every Debian), as an unprivileged user. docker-compose.yml runs it with PostgreSQL.
#
#   docker build -t posts-server .
#   docker run -e DATABASE_URL=postgres://user:pass@db/posts -p 8080:8080 posts-server

ARG SWIFT_VERSION=6.3
ARG DEBIAN_RELEASE=bookworm

FROM swift:${SWIFT_VERSION}-${DEBIAN_RELEASE} AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq-dev libcurl4-openssl-dev zlib1g-dev libvips-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first: a change to the sources does not fetch them again.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
# The standard library goes into the binary, so the runtime image needs no Swift.
RUN swift build -c release --product posts-server --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/posts-server" /out/bin/posts-server
COPY migrations /out/share/posts-server/migrations
COPY console /out/share/posts-server/console

FROM debian:${DEBIAN_RELEASE}-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq5 libcurl4 libvips42 ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/posts-server --create-home posts \
    && install -d -o posts -g posts /var/lib/posts-server/uploads
# The binary finds its migrations at ../share/posts-server/migrations, the console's
# files beside them.
COPY --from=build /out/ /usr/local/
USER posts
WORKDIR /var/lib/posts-server
ENV HOST=0.0.0.0 \
    PORT=8080 \
    UPLOAD_DIR=/var/lib/posts-server/uploads \
    LOG_FORMAT=text
EXPOSE 8080
VOLUME ["/var/lib/posts-server/uploads"]
# SIGTERM reaches the server directly (no shell in between): in-flight requests finish.
ENTRYPOINT ["/usr/local/bin/posts-server"]
CMD ["serve"]
