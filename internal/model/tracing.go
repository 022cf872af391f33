package model

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// traced makes each call through t an OpenTelemetry client span and sends
// the caller's trace context on (W3C traceparent), so a model server that
// traces joins the turn's trace. The tracer is the one of the span in the
// request's context: without one (tracing off) the call is not traced and
// no header is added.
func traced(t http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(t, otelhttp.WithPropagators(propagation.TraceContext{}))
}
