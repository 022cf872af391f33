// Package e2e installs the Helm chart on the test bed's real node
// (internal/testenv/node: a kubelet on containerd) and checks what only a
// kubelet shows: the image starts as 65532 on a read-only root, the
// operator's Job and Deployment pods run and read their volumes, probes
// pass, the route's Service answers, a prompt edit rolls the route
// without a failed turn, helm test passes and helm uninstall keeps the
// CRDs. Milvus Lite, a scripted OpenAI-compatible model server and a git
// server run on the host, where pods reach them at the bridge's address.
//
// make test runs a bounded version (one store from a ConfigMap, one route,
// one question); make e2e runs all of it (-e2e.full) and prints the times.
package e2e
