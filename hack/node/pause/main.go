// Command pause is the test bed node's pod sandbox process: it holds the
// pod's namespaces and exits on SIGTERM or SIGINT, as Kubernetes' pause
// image does. The bed builds it, as every image, from the Go module proxy:
// no registry is reachable to pull registry.k8s.io/pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}
