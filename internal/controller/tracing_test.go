package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// With tracing on, each reconcile is a span naming the object, its
// outcome and its error; what the reconcile does in its context (the API
// requests of a traced client) becomes its children. Off, the reconciler
// runs unwrapped.
func TestEachReconcileIsASpan(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	failing := reconcile.Func(func(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
		_, child := trace.SpanFromContext(ctx).TracerProvider().Tracer("test").Start(ctx, "GET queryroutes")
		child.End()
		return ctrl.Result{RequeueAfter: time.Second}, errors.New("apply Deployment: conflict")
	})
	req := ctrl.Request{}
	req.Namespace, req.Name = "acme-rag", "support"
	if _, err := traced(failing, provider, "QueryRoute").Reconcile(context.Background(), req); err == nil {
		t.Fatal("the reconcile's error was lost")
	}
	spans := recorder.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the reconcile and its child", len(spans))
	}
	child, span := spans[0], spans[1]
	if span.Name() != "reconcile QueryRoute" || span.Status().Code != codes.Error || child.Parent().SpanID() != span.SpanContext().SpanID() {
		t.Errorf("span %q status %v, child's parent %v", span.Name(), span.Status(), child.Parent().SpanID())
	}
	want := map[attribute.Key]string{"k8s.namespace.name": "acme-rag", "ragroute.name": "support", "ragroute.kind": "QueryRoute", "ragroute.requeue": "true"}
	for _, a := range span.Attributes() {
		if v, ok := want[a.Key]; ok && a.Value.String() == v {
			delete(want, a.Key)
		}
	}
	if len(want) != 0 {
		t.Errorf("attributes missing or wrong: %v (got %v)", want, span.Attributes())
	}
	if _, wrapped := traced(failing, nil, "QueryRoute").(tracedReconciler); wrapped {
		t.Error("without a tracer provider the reconciler is still wrapped")
	}
}
