package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// requestsFor lists the objects of list's kind in namespace whose field
// index holds value, as reconcile requests.
func requestsFor(ctx context.Context, c client.Client, list client.ObjectList, namespace, field, value string) []reconcile.Request {
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{field: value}); err != nil {
		log.FromContext(ctx).Error(err, "list referrers", "field", field, "value", value)
		return nil
	}
	var requests []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{
			Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		return nil
	})
	return requests
}

// referrersBy maps an object to the objects of kind L (a list type) in its
// namespace whose field index holds its name: the stores reading a
// ConfigMap or Secret, the routes using a store or prompt, and so on.
func referrersBy[L any, PL interface {
	*L
	client.ObjectList
}](c client.Client, field string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return requestsFor(ctx, c, PL(new(L)), o.GetNamespace(), field, o.GetName())
	})
}

// routesUsingSecret maps a Secret to the routes that read it, directly or
// through their KnowledgeStore.
func routesUsingSecret(c client.Client) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, secret client.Object) []reconcile.Request {
		requests := requestsFor(ctx, c, &v1alpha1.QueryRouteList{}, secret.GetNamespace(), indexRouteBySecret, secret.GetName())
		for _, store := range requestsFor(ctx, c, &v1alpha1.KnowledgeStoreList{}, secret.GetNamespace(), indexStoreBySecret, secret.GetName()) {
			requests = append(requests, requestsFor(ctx, c, &v1alpha1.QueryRouteList{}, store.Namespace, indexRouteByStore, store.Name)...)
		}
		return requests
	})
}

// evaluationsOfStore maps a store to the evaluations of the routes that
// read it.
func evaluationsOfStore(c client.Client) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, store client.Object) []reconcile.Request {
		var requests []reconcile.Request
		for _, route := range requestsFor(ctx, c, &v1alpha1.QueryRouteList{}, store.GetNamespace(), indexRouteByStore, store.GetName()) {
			requests = append(requests, requestsFor(ctx, c, &v1alpha1.RouteEvaluationList{}, route.Namespace, indexEvaluationByRoute, route.Name)...)
		}
		return requests
	})
}

// facts are the parts of a referenced object's status that referrers use.
// An update that changes none of them (nor the spec) is not worth a
// reconcile of every referrer.
func facts(obj client.Object) (int64, metav1.ConditionStatus, string) {
	switch o := obj.(type) {
	case *v1alpha1.KnowledgeStore:
		// The serving generation's embedder and analyzer: a route is
		// Ready only once they are the ones the route's pods use; its
		// number and units: the route's GroundingUnits names them.
		return o.Generation, readyStatus(o.Status.Conditions),
			servingEmbedder(o) + "\x00" + o.Status.IndexAnalyzer + "\x00" + servingUnits(o)
	case *v1alpha1.PlatformPrompt:
		return o.Generation, readyStatus(o.Status.Conditions), o.Status.Hash
	}
	return obj.GetGeneration(), "", ""
}

// referencedFactsChanged passes creates and deletes, and updates that change
// the spec or the facts referrers consume; status-only noise is dropped.
var referencedFactsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldGen, oldReady, oldHash := facts(e.ObjectOld)
		newGen, newReady, newHash := facts(e.ObjectNew)
		return oldGen != newGen || oldReady != newReady || oldHash != newHash
	},
}

// evaluatedFacts are what a RouteEvaluation measures of a route or a store
// (the route's effective config hash, the store's index generation) and
// whether the route serves (Ready).
func evaluatedFacts(obj client.Object) (string, int64) {
	switch o := obj.(type) {
	case *v1alpha1.QueryRoute:
		// Whether it serves its spec (routeServesItsSpec), not only
		// whether it is Ready: a run waits for the end of a roll.
		return fmt.Sprintf("%s/%t", o.Status.ConfigHash, routeServesItsSpec(o)), 0
	case *v1alpha1.KnowledgeStore:
		return "", o.Status.IndexGeneration
	}
	return "", 0
}

// evaluatedFactsChanged passes creates and deletes, and updates that
// change what an evaluation measures (onChange) or whether its route
// serves; everything else a route or store reports is dropped.
var evaluatedFactsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldHash, oldGen := evaluatedFacts(e.ObjectOld)
		newHash, newGen := evaluatedFacts(e.ObjectNew)
		return oldHash != newHash || oldGen != newGen || e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
	},
}

// evaluationOfPod maps an evaluation run's pod to its RouteEvaluation.
func evaluationOfPod() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, pod client.Object) []reconcile.Request {
		name, ok := pod.GetLabels()["ragroute.io/routeevaluation"]
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: name}}}
	})
}

// defaultRouteCountDelay is how long a prompt waits after a route using it
// comes, goes or moves before it counts again, unless
// Options.RouteCountDelay says otherwise: while routes keep coming, each
// prompt's count is written at most once per delay, so a burst of route
// creations (a GitOps sync of thousands) writes each count a few times,
// not once a second (at 5,000 routes and 50 prompts, a one-second delay
// wrote 581 counts, 2,161 when other work slowed the creates; 10 s, 140).
// The count is a figure for people; nothing waits on it.
const defaultRouteCountDelay = 10 * time.Second

// recountPrompts enqueues, after delay, the prompts whose route count a
// route event may change: the prompt it uses, and on an update the one it
// used before. Updates that change neither the spec nor the prompt
// reference are ignored. A prompt already waiting is not delayed further.
func recountPrompts(delay time.Duration) handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, obj := range objs {
			route, ok := obj.(*v1alpha1.QueryRoute)
			if !ok {
				continue
			}
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKey{
				Namespace: route.Namespace, Name: route.Spec.PlatformPromptRef.Name}}, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetGeneration() == e.ObjectNew.GetGeneration() {
				return // status only
			}
			enqueue(q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
	}
}
