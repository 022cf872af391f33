package controller

import (
	"context"
	"errors"
)

// The phase contract, one for all the reconcilers. Reconcile fetches its
// object, opens a scope (routeScope, storeScope, promptScope,
// evaluationScope) and runs an ordered list of phases over it with
// runPhases. A phase records what it
// found in the scope and returns nil, or returns one of three outcomes:
//
//   - a *referenceError: something the object depends on is broken (a
//     missing reference, a spec that cannot be rendered, a child owned by
//     someone else). The remaining phases do not run; Reconcile records it
//     in the scope, the conditions name it, and Reconcile returns no error:
//     a watch on what is broken brings the object back.
//   - a *refusedWrite: the API server refused a child's apply or delete.
//     The remaining phases still run (what they observe is still true);
//     the status reports it and Reconcile returns it, so the object is
//     retried with backoff.
//   - any other error: the API server could not be read. Nothing more
//     runs, the status is kept (a failed read says nothing about the
//     object) and Reconcile returns the error to retry.
//
// A broken part that blocks only one phase's work, not the object (a
// store's missing source ConfigMap stops its ingestion, not the reading of
// what its alias serves), is that phase's own fact in the scope. After the
// phases Reconcile may observe what the children report (a route's
// rollout), then applies the status once, derived by pure functions from
// the scope.

// phase is one step of a reconcile over scope S.
type phase[S any] func(context.Context, S) error

// phaseOutcome is what the phases found that every kind's conditions
// report.
type phaseOutcome struct {
	// refErr stopped the phases.
	refErr *referenceError
	// applyErr is the writes the API server refused; the phases went on.
	applyErr error
}

// runPhases runs phases in order under the contract above. Its error is a
// failed read: the caller keeps the object's status.
func runPhases[S any](ctx context.Context, s S, phases ...phase[S]) (phaseOutcome, error) {
	var out phaseOutcome
	for _, run := range phases {
		err := run(ctx, s)
		if err == nil {
			continue
		}
		if refErr, ok := asReferenceError(err); ok {
			out.refErr = refErr
			return out, nil
		}
		if isRefusedWrite(err) {
			out.applyErr = errors.Join(out.applyErr, err)
			continue
		}
		return out, err
	}
	return out, nil
}

// refusedWrite is a child's apply or delete that the API server did not
// accept (a quota, an admission webhook, a missing permission).
type refusedWrite struct{ err error }

func (e *refusedWrite) Error() string { return e.err.Error() }
func (e *refusedWrite) Unwrap() error { return e.err }

// isRefusedWrite reports whether err is (or wraps) a refusedWrite.
func isRefusedWrite(err error) bool {
	var refused *refusedWrite
	return errors.As(err, &refused)
}
