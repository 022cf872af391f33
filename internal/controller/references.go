package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// referenceError is a broken reference: Reason is the condition reason that
// names the kind of breakage, Message names the object and the field.
type referenceError struct {
	Reason  string
	Message string
}

func (e *referenceError) Error() string { return e.Message }

// asReferenceError reports whether err is (or wraps) a referenceError.
func asReferenceError(err error) (*referenceError, bool) {
	var refErr *referenceError
	ok := errors.As(err, &refErr)
	return refErr, ok
}

// secretUseLabel marks a Secret the operator may read. The operator caches
// and watches only Secrets that carry it, so its memory and what it can
// leak stay bounded by what admins opted in, not by every Secret in the
// cluster.
const (
	secretUseLabel = "ragroute.io/use"
	secretUseValue = "true"
)

// secretReader reads referenced Secrets from the cache, which holds only
// labelled ones, and tells a missing Secret from an unlabelled one with a
// metadata-only read of the API server (values never leave it).
type secretReader struct {
	cache client.Reader
	live  client.Reader
}

// key fetches the Secret selected by ref and checks the key exists. field
// is the spec path of the reference, for the message.
func (r secretReader) key(ctx context.Context, namespace, field string, ref *v1alpha1.SecretKeyRef) (*corev1.Secret, error) {
	secret, err := r.whole(ctx, namespace, field, ref.Name)
	if err != nil {
		return nil, err
	}
	if _, ok := secret.Data[ref.Key]; !ok {
		return nil, &referenceError{Reason: v1alpha1.ReasonSecretKeyNotFound,
			Message: fmt.Sprintf("Secret %q referenced by %s has no key %q", ref.Name, field, ref.Key)}
	}
	return secret, nil
}

// sendable fetches the Secret key of use and checks the Secret may be sent
// where use sends it (secretHostRefusal).
func (r secretReader) sendable(ctx context.Context, namespace string, use secretUse) (*corev1.Secret, error) {
	secret, err := r.key(ctx, namespace, use.field, &use.ref)
	if err != nil {
		return nil, err
	}
	if refusal := secretHostRefusal(secret, use.field, use.to); refusal != nil {
		return nil, refusal
	}
	return secret, nil
}

// whole fetches a whole Secret (e.g. git credentials) by name.
func (r secretReader) whole(ctx context.Context, namespace, field, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := r.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret)
	if err == nil {
		return secret, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get Secret %q for %s: %w", name, field, err)
	}
	if unlabelled, err := r.existsUnlabelled(ctx, namespace, name); err != nil {
		return nil, fmt.Errorf("get Secret %q for %s: %w", name, field, err)
	} else if unlabelled {
		return nil, &referenceError{Reason: v1alpha1.ReasonSecretNotLabeled,
			Message: fmt.Sprintf("Secret %q referenced by %s exists but lacks the label %s=%s the operator needs to read it (kubectl label secret %s %s=%s)",
				name, field, secretUseLabel, secretUseValue, name, secretUseLabel, secretUseValue)}
	}
	return nil, &referenceError{Reason: v1alpha1.ReasonSecretNotFound,
		Message: fmt.Sprintf("Secret %q referenced by %s not found", name, field)}
}

// existsUnlabelled reads only the Secret's metadata from the API server.
func (r secretReader) existsUnlabelled(ctx context.Context, namespace, name string) (bool, error) {
	if r.live == nil {
		return false, nil
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := r.live.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, meta)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return meta.Labels[secretUseLabel] != secretUseValue, nil
}

// getConfigMapKey returns the value of the ConfigMap key selected by ref,
// read with c: the API server's reader, as the cache holds no ConfigMap a
// user made.
func getConfigMapKey(ctx context.Context, c client.Reader, namespace, field string, ref v1alpha1.ConfigMapKeyRef) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return "", &referenceError{Reason: v1alpha1.ReasonConfigMapNotFound,
				Message: fmt.Sprintf("ConfigMap %q referenced by %s not found", ref.Name, field)}
		}
		return "", fmt.Errorf("get ConfigMap %q for %s: %w", ref.Name, field, err)
	}
	value, ok := cm.Data[ref.Key]
	if !ok {
		return "", &referenceError{Reason: v1alpha1.ReasonConfigMapKeyNotFound,
			Message: fmt.Sprintf("ConfigMap %q referenced by %s has no key %q", ref.Name, field, ref.Key)}
	}
	return value, nil
}
