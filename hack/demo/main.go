// Command demo runs ragroute's main job end to end on this machine (make
// demo): real local models, Milvus Lite, a local control plane (etcd +
// kube-apiserver, no nodes) with the CRDs and the operator, the samples of
// config/samples applied with their endpoints pointed at the local
// services, then the ingestion Job and the route Deployment the operator
// rendered, run here as local processes from their specs as read back from
// the API server, and finally questions asked as two users with the
// streamed, cited answers printed. Ctrl-C stops everything it started, by
// PID, in reverse order.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := configFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 2
	}
	d := newDemo(cfg)
	err = d.run(ctx)
	d.shutdown()
	switch {
	case err == nil && cfg.stay:
		return 0 // Ctrl-C is how a kept demo ends
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "demo: interrupted; everything it started is stopped")
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		fmt.Fprintln(os.Stderr, "demo: logs are in", cfg.work)
		return 1
	}
	return 0
}
