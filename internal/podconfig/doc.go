// Package podconfig holds the contracts between the operator and its pods:
// the route config that `ragroute serve` loads and the ingest config that
// `ragroute ingest` loads. The controllers render them into ConfigMaps; the
// pods read them at start. Both are versioned, decoded strictly (an unknown
// field or version is refused, never half understood) and hold no secrets:
// a secret is named by the environment variable that carries it into the
// pod. The package owns every enum of the contracts (enums.go) and all of
// their validation: the operator validates what it renders and the pods
// what they load, with the same Validate. The package imports nothing
// from Kubernetes.
package podconfig
