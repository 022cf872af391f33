// Package testenv starts the real servers that integration tests run
// against: Milvus Lite and a kube-controller-manager (for garbage
// collection) next to envtest's kube-apiserver and etcd. Every process is
// bound to loopback, started by the test and stopped by its PID.
package testenv
