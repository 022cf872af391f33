// Package testenv starts the real servers that integration tests run
// against: Milvus Lite, Redis and a kube-controller-manager (for garbage
// collection) next to envtest's kube-apiserver and etcd, plus a scripted
// OpenAI-compatible model server (chat and embeddings) in-process. Every
// process is bound to loopback, started by the test and stopped by its PID.
package testenv
