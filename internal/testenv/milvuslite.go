package testenv

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// EnvMilvusLite names the milvus-lite command (hack/milvus-lite.sh prints it).
const EnvMilvusLite = "RAGROUTE_MILVUS_LITE"

// MilvusLite is a running Milvus Lite gRPC server.
type MilvusLite struct {
	*Process
	// URI is where clients connect, e.g. http://127.0.0.1:40123.
	URI string
}

// StartMilvusLite starts `milvus-lite server` on a free loopback port with
// its data under dir and waits until it listens.
func StartMilvusLite(ctx context.Context, dir string) (*MilvusLite, error) {
	return StartMilvusLiteOn(ctx, dir, "127.0.0.1")
}

// StartMilvusLiteOn is StartMilvusLite listening on host, e.g. a real
// node's bridge address, for pods to reach.
func StartMilvusLiteOn(ctx context.Context, dir, host string) (*MilvusLite, error) {
	bin := os.Getenv(EnvMilvusLite)
	if bin == "" {
		return nil, errors.New(EnvMilvusLite + " is unset: run the tests with `make test`, which installs Milvus Lite")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := start(dir, bin, "server", "--data-dir", filepath.Join(dir, "milvus-data"),
		"--host", host, "--port", strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := p.waitForPort(waitCtx, addr); err != nil {
		p.Stop()
		return nil, err
	}
	return &MilvusLite{Process: p, URI: "http://" + addr}, nil
}
