package main

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracingFromEnv exports spans with OTLP over gRPC when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set; the exporter
// reads the rest of the OTEL_EXPORTER_OTLP_* variables itself (an http://
// endpoint is plaintext). Unset: no tracing, and nil. service and attrs
// name the process; shutdown flushes what is buffered.
func tracingFromEnv(ctx context.Context, env environment, service string, attrs ...attribute.KeyValue) (tp trace.TracerProvider, shutdown func(), err error) {
	if env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, func() {}, nil
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	attrs = append([]attribute.KeyValue{attribute.String("service.name", service), attribute.String("service.version", version)}, attrs...)
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(resource.NewSchemaless(attrs...)))
	return provider, func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = provider.Shutdown(flush)
	}, nil
}
