// Package testenv starts the real servers that integration tests run
// against: Milvus Lite, Redis, kube-controller-manager (the garbage
// collector, or the workload controllers too), kube-scheduler and kwok next
// to envtest's kube-apiserver and etcd, plus a scripted OpenAI-compatible
// model server (chat and embeddings) in-process. Package kubebed assembles
// a control plane with simulated nodes from them. Every process is bound to
// loopback, started by the test and stopped by its PID. Under -short
// every test that needs one of them skips (Integration), so `go test
// -short ./...` runs with no services at all.
package testenv
