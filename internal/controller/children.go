package controller

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// child is one object an owner keeps in line with its spec: one row of the
// owner's table of children.
type child struct {
	// kind names the child in messages ("ConfigMap", "ingest Job").
	kind string
	// existing is an empty object of the child's kind; the applier reads
	// the child from the cache into it.
	existing client.Object
	name     string
	// desired builds the child as the owner wants it, hashed; it returns
	// nil when the owner's spec does not ask for this optional child, and
	// one the owner controls is then deleted.
	desired func() (*hashedChild, error)
}

// desiredState is a child's desired builder for a builder's apply
// configuration: hashed by withAppliedHash, or nil when the builder
// returned nil (an optional child the owner's spec does not ask for).
func desiredState[A any, T interface {
	*A
	annotatable[T]
}](apply T) func() (*hashedChild, error) {
	return func() (*hashedChild, error) {
		if apply == nil {
			return nil, nil
		}
		hashed, err := withAppliedHash(apply)
		if err != nil {
			return nil, err
		}
		return &hashed, nil
	}
}

// childApplier keeps one owner's children in line with what it wants, the
// same way for every owner: it never adopts an object it does not control,
// writes nothing a child already has, and removes what the owner dropped.
type childApplier struct {
	client client.Client
	// live reads past the cache, which holds only labelled objects: a
	// wanted child the cache lacks is looked up there (metadata only), so
	// a same-named object without the label is refused too. nil: the
	// cache is trusted.
	live  client.Reader
	owner client.Object
	// ownerKind names the owner in a conflict's message ("route", "store").
	ownerKind string
}

// observedChild is a child read from the cache (into existing), with its
// desired state built (nil: not wanted).
type observedChild struct {
	child
	hashed *hashedChild
}

// apply reads every child of chains from the cache and refuses, before any
// write, to take over one of the same name the owner does not control
// (applying with force would silently adopt it): a referenceError with
// ReasonChildConflict that names it. It then walks each chain in order, the
// chains side by side: a wanted child not up to date (appliedUpToDate) is
// server-side applied, an unwanted one the owner controls is deleted. A
// write the API server refuses is a refusedWrite.
func (a childApplier) apply(ctx context.Context, chains ...[]child) error {
	read, err := a.readAll(ctx, chains)
	if err != nil {
		return err
	}
	group, groupCtx := errgroup.WithContext(ctx)
	for _, chain := range read {
		group.Go(func() error { return a.write(groupCtx, chain) })
	}
	return group.Wait()
}

// readAll reads every child of chains (read), all at once: a new owner's
// children are all missing from the cache, and each is then looked up on
// the API server, one round trip for all rather than one after the other.
// Of several failures, the first in chain order is returned, so a
// reconcile names the same conflict every time.
func (a childApplier) readAll(ctx context.Context, chains [][]child) ([][]observedChild, error) {
	read := make([][]observedChild, len(chains))
	errs := make([][]error, len(chains))
	var wg sync.WaitGroup
	for i, chain := range chains {
		read[i], errs[i] = make([]observedChild, len(chain)), make([]error, len(chain))
		for j, c := range chain {
			wg.Go(func() { read[i][j], errs[i][j] = a.read(ctx, c) })
		}
	}
	wg.Wait()
	for _, chainErrs := range errs {
		for _, err := range chainErrs {
			if err != nil {
				return nil, err
			}
		}
	}
	return read, nil
}

// read builds c's desired state and reads c from the cache into
// c.existing (left empty when there is none). A wanted child of the same
// name that the owner does not control is a conflict.
func (a childApplier) read(ctx context.Context, c child) (observedChild, error) {
	hashed, err := c.desired()
	if err != nil {
		return observedChild{}, fmt.Errorf("build %s %s: %w", c.kind, c.name, err)
	}
	if hashed != nil && hashed.name != c.name {
		return observedChild{}, fmt.Errorf("build %s %s: the builder names it %q", c.kind, c.name, hashed.name)
	}
	key := client.ObjectKey{Namespace: a.owner.GetNamespace(), Name: c.name}
	err = a.client.Get(ctx, key, c.existing)
	if client.IgnoreNotFound(err) != nil {
		return observedChild{}, fmt.Errorf("get %s %s: %w", c.kind, c.name, err)
	}
	var found metav1.Object
	if err == nil {
		found = c.existing
	} else if hashed != nil && a.live != nil {
		if found, err = a.readLive(ctx, c, key); err != nil {
			return observedChild{}, err
		}
	}
	if found != nil && hashed != nil && !metav1.IsControlledBy(found, a.owner) {
		return observedChild{}, &referenceError{Reason: v1alpha1.ReasonChildConflict,
			Message: fmt.Sprintf("%s %q exists and is not owned by this %s; rename the %s or remove it",
				c.kind, c.name, a.ownerKind, a.ownerKind)}
	}
	return observedChild{child: c, hashed: hashed}, nil
}

// readLive reads the metadata of the child the cache lacks from the API
// server; nil when there is none. One the owner controls (its label
// removed) is applied again, which labels it.
func (a childApplier) readLive(ctx context.Context, c child, key client.ObjectKey) (metav1.Object, error) {
	gvk, err := apiutil.GVKForObject(c.existing, a.client.Scheme())
	if err != nil {
		return nil, fmt.Errorf("kind of %s %s: %w", c.kind, c.name, err)
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	if err := a.live.Get(ctx, key, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s %s from the API server: %w", c.kind, c.name, err)
	}
	return meta, nil
}

// write applies or deletes the children of one chain, in order.
func (a childApplier) write(ctx context.Context, chain []observedChild) error {
	for _, c := range chain {
		switch {
		case c.hashed == nil:
			if !metav1.IsControlledBy(c.existing, a.owner) {
				continue // none, or not ours to remove
			}
			if err := a.client.Delete(ctx, c.existing); client.IgnoreNotFound(err) != nil {
				return &refusedWrite{fmt.Errorf("delete %s %s: %w", c.kind, c.name, err)}
			}
		case appliedUpToDate(c.existing, a.owner, c.hashed.hash):
			continue
		default:
			if err := a.client.Apply(ctx, c.hashed.apply, fieldOwner, client.ForceOwnership); err != nil {
				return &refusedWrite{fmt.Errorf("apply %s %s: %w", c.kind, c.name, err)}
			}
		}
	}
	return nil
}
