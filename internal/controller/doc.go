// Package controller reconciles ragroute's custom resources, one reconciler
// per kind: PlatformPrompt (resolve and validate the text, hash it, count
// the routes that use it), KnowledgeStore (resolve Secrets, probe Milvus,
// apply the ingestion ConfigMap, Job and CronJob, read what the alias
// serves), QueryRoute (resolve references, render the route config,
// apply ConfigMap + Deployment + Service) and RouteEvaluation (run
// `ragroute eval-route` as Jobs against a route, read each finished run's
// termination message into status, judge it against its thresholds and
// the previous run).
//
// The reconcilers share one shape: fetch the object, open a scope
// (routeScope, storeScope, promptScope, evaluationScope) that carries what the phases find,
// run an ordered list of small phase methods under one contract
// (phases.go), apply the status once, and derive the conditions from those
// facts with pure functions. A broken reference stops the phases and is a
// fact the conditions name, not an error; a write the API server refuses
// is reported too, the later phases still run and the object is retried;
// only a failed read keeps the old status. Routes and stores keep their
// children through one childApplier (children.go): a same-named object the
// owner does not control is refused before anything is written, an
// optional child the spec dropped is deleted, and nothing is written that
// would not change: a status equal to the current one is not applied
// (status.go), nor a child whose ragroute.io/applied-hash annotation, read
// from the cache, matches the hash of its desired apply configuration
// (applied.go).
//
// Files are named by role: <kind>_controller.go holds the reconciler, its
// RBAC markers, its scope, Reconcile, the status apply and the list of what
// it watches (SetupWithManager); <kind>_phases.go the phases;
// <kind>_conditions.go the facts and the pure conditions derived from them;
// <kind>_render.go the pure rendering of the config files pods read;
// <kind>_builders.go the pure builders of child objects, checked against
// golden files in testdata/. What several kinds share sits in a file named
// for its concern, never in one kind's file: podsecurity.go (the restricted
// pod every child pod starts from), storeconfig.go (a store's Milvus and
// embedder as route and ingestion configs both render them), owner.go,
// names.go, hash.go, defaulted.go (a spec field or its default),
// messages.go (status text cut to size) and secretrefs.go (the Secret keys
// a spec references).
// indexers.go holds the field indexes and watches.go every watch's map
// function and predicate: how a change to a referenced Secret, ConfigMap,
// store, prompt or route, or to a run's pod, reaches exactly the objects
// that use it.
package controller
