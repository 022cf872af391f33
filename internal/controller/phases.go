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
//
// One shape for every kind: the scope is built first (the object and what
// its spec alone says), the phases fill it, the outcome is recorded in it,
// and one status apply at the end derives the conditions with pure
// functions. The apply is called, not deferred: on a failed read it must
// not run, and that is the one exit that skips it. Where a kind differs,
// the difference is needed and its scope says why:
//
//   - storeScope: the phases write the facts themselves (storeFacts),
//     since later phases decide on earlier findings (no ingestion while
//     Milvus does not answer) and each finding is already the fact the
//     conditions read.
//   - routeScope: the facts are derived after the phases (routeFactsOf),
//     since the rollout fact compares the Deployment with the config hash
//     rendered in this reconcile; the Deployment is read after the phases
//     whatever they found, so a route whose reference broke still reports
//     the rollout of its last good config.
//   - evaluationScope: the phases move the run record in the status being
//     built (a finished run from active to lastRun, a started one into
//     active). The record is state, not an observation: a finished run's
//     Job and termination message are gone after the Job's TTL, so it
//     cannot be read back from the cluster like a route's rollout, and
//     startRun decides on the record as observeActiveRun left it. The
//     conditions are still derived at the end, from that record.

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
