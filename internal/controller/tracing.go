package controller

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// tracerName names the operator's spans' instrumentation scope.
const tracerName = "github.com/ragroute/ragroute/internal/controller"

// tracedReconciler makes each reconcile a span, "reconcile <Kind>", with
// the object's namespace and name, whether it requeues, and its error.
// The API requests it makes are its children when the manager's client
// is traced (ragroute manager with OTEL_EXPORTER_OTLP_ENDPOINT).
type tracedReconciler struct {
	inner  reconcile.Reconciler
	tracer trace.Tracer
	kind   string
}

// traced wraps r in a span per reconcile; without a provider, r itself.
func traced(r reconcile.Reconciler, tp trace.TracerProvider, kind string) reconcile.Reconciler {
	if tp == nil {
		return r
	}
	return tracedReconciler{inner: r, tracer: tp.Tracer(tracerName), kind: kind}
}

func (t tracedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, span := t.tracer.Start(ctx, "reconcile "+t.kind, trace.WithAttributes(
		attribute.String("k8s.namespace.name", req.Namespace), attribute.String("ragroute.kind", t.kind),
		attribute.String("ragroute.name", req.Name)))
	defer span.End()
	res, err := t.inner.Reconcile(ctx, req)
	span.SetAttributes(attribute.Bool("ragroute.requeue", !res.IsZero()))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "reconcile failed")
	}
	return res, err
}
