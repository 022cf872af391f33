package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// getSecretKey fetches the Secret selected by ref and checks the key exists.
// field is the spec path of the reference, for the message.
func getSecretKey(ctx context.Context, c client.Reader, namespace, field string, ref *v1alpha1.SecretKeyRef) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &referenceError{Reason: v1alpha1.ReasonSecretNotFound,
				Message: fmt.Sprintf("Secret %q referenced by %s not found", ref.Name, field)}
		}
		return nil, fmt.Errorf("get Secret %q for %s: %w", ref.Name, field, err)
	}
	if _, ok := secret.Data[ref.Key]; !ok {
		return nil, &referenceError{Reason: v1alpha1.ReasonSecretKeyNotFound,
			Message: fmt.Sprintf("Secret %q referenced by %s has no key %q", ref.Name, field, ref.Key)}
	}
	return secret, nil
}

// getSecret fetches a whole Secret (e.g. git credentials) by name.
func getSecret(ctx context.Context, c client.Reader, namespace, field, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &referenceError{Reason: v1alpha1.ReasonSecretNotFound,
				Message: fmt.Sprintf("Secret %q referenced by %s not found", name, field)}
		}
		return nil, fmt.Errorf("get Secret %q for %s: %w", name, field, err)
	}
	return secret, nil
}

// getConfigMapKey returns the value of the ConfigMap key selected by ref.
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
