package controller

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// routeCountDelay is how long a prompt waits after a route using it comes,
// goes or moves before it counts again: a burst of route creations (a
// GitOps sync of hundreds) writes each prompt's count once, not once per
// route. The count is a figure for people; nothing waits on it.
const routeCountDelay = time.Second

// recountPrompts enqueues, after routeCountDelay, the prompts whose route
// count a route event may change: the prompt it uses, and on an update the
// one it used before. Updates that change neither the spec nor the prompt
// reference are ignored.
func recountPrompts() handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, obj := range objs {
			route, ok := obj.(*v1alpha1.QueryRoute)
			if !ok {
				continue
			}
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKey{
				Namespace: route.Namespace, Name: route.Spec.PlatformPromptRef.Name}}, routeCountDelay)
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
