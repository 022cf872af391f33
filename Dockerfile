# One image, one binary: ragroute manager | serve | ingest | eval-route (the
# operator, a route's pods, a store's ingestion Jobs, a RouteEvaluation's
# run Jobs).
ARG BASE_IMAGE=golang:1.26
FROM ${BASE_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev

WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o ragroute ./cmd/ragroute

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
# The same labels as `make image` (hack/image); its tests compare them.
LABEL org.opencontainers.image.title="ragroute"
LABEL org.opencontainers.image.source="https://github.com/ragroute/ragroute"
LABEL org.opencontainers.image.version="${VERSION}"
LABEL org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /workspace/ragroute /ragroute
USER 65532:65532
ENTRYPOINT ["/ragroute"]
