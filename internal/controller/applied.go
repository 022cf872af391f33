package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appliedHashAnnotation on a child holds the hash of the apply
// configuration the operator last applied to it. A child that carries the
// hash of what the operator would apply now is left alone: no request is
// made. Like prometheus-operator's input hash, this means a child edited by
// hand is not reverted until the owner's desired state changes; deleting
// the child makes the operator create it again.
const appliedHashAnnotation = "ragroute.io/applied-hash"

// annotatable is a typed apply configuration (ConfigMap, Deployment,
// Service, Job, CronJob) to which annotations can be added.
type annotatable[T any] interface {
	runtime.ApplyConfiguration
	GetName() *string
	WithAnnotations(map[string]string) T
}

// hashedChild is one child to apply, with the hash of its desired state.
type hashedChild struct {
	name  string
	apply runtime.ApplyConfiguration
	hash  string
}

// withAppliedHash hashes a child's desired apply configuration, then
// records the hash on it in appliedHashAnnotation. The builders stay pure:
// the annotation is added only here, at apply time.
func withAppliedHash[T annotatable[T]](apply T) (hashedChild, error) {
	hash, err := applyConfigHash(apply)
	if err != nil {
		return hashedChild{}, err
	}
	name := ""
	if n := apply.GetName(); n != nil {
		name = *n
	}
	apply.WithAnnotations(map[string]string{appliedHashAnnotation: hash})
	return hashedChild{name: name, apply: apply, hash: hash}, nil
}

// applyConfigHash is a hash of an apply configuration's JSON. encoding/json
// writes struct fields in declaration order and map keys sorted, so equal
// configurations hash equally.
func applyConfigHash(apply runtime.ApplyConfiguration) (string, error) {
	data, err := json.Marshal(apply)
	if err != nil {
		return "", fmt.Errorf("hash apply configuration: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// appliedUpToDate reports whether existing, as read from the cache, is
// controlled by owner and was last applied with hash: applying the same
// configuration again would change nothing the operator owns.
func appliedUpToDate(existing client.Object, owner metav1.Object, hash string) bool {
	return existing.GetUID() != "" && metav1.IsControlledBy(existing, owner) &&
		existing.GetAnnotations()[appliedHashAnnotation] == hash
}
