// Package scale measures the operator at scale on a test bed with
// simulated nodes (internal/testenv/kubebed): the operator's manager runs
// as a real process (bin/ragroute manager), kube-scheduler binds route pods
// to kwok's nodes and kwok marks them Ready, so QueryRoutes become Ready as
// in a cluster.
//
// `go test ./test/scale` (part of `make test`) runs a small world and
// asserts what must hold at any size: everything turns Ready, editing one
// PlatformPrompt rolls exactly its routes, and a restarted manager with
// nothing changed makes no API write at all. `make bench-operator` runs the
// same path with 5,000 routes (BENCH_OPERATOR_ROUTES) and prints the
// figures and the goals (docs/performance.md, "Operator at scale").
//
// Environment: KUBEBUILDER_ASSETS and RAGROUTE_MILVUS_LITE (the test skips
// without them), RAGROUTE_BIN (a prebuilt ragroute; otherwise the test
// builds one), BENCH_JSON (write the figures there), RAGROUTE_SCALE_KEEP
// (keep the logs and audit log in a folder the test names).
package scale
