package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/ragroute/ragroute/internal/route/identity"
)

// /mcp serves the route's knowledge to agents as Model Context Protocol
// tools (mcptools.go) over the streamable HTTP transport of the official
// Go SDK. Each request is authenticated as every API request is, and
// each tool call is admitted, limited, measured and logged as a search
// or a turn of the HTTP API is.
//
// The transport is stateless: the route keeps no MCP session between
// requests, so any replica serves any request (the Service balances
// them) and no request can reach what another identity's request left
// behind. A request that names a session (Mcp-Session-Id, which this
// route never issues) is refused, as is a JSON-RPC batch (mcpbatch.go).
// Each request holds one of its caller's streams while it lasts
// (openStream): the per-user and replica stream limits bound /mcp as they
// bound the API's event streams, and the drain ends it.

// MCPOptions switch on /mcp.
type MCPOptions struct {
	// Issuer is the JWT issuer that grants the route's tokens, named as
	// the authorization server of the OAuth protected-resource metadata
	// (/.well-known/oauth-protected-resource) and, through that document,
	// by every 401's WWW-Authenticate; "" (trusted proxy identity): no
	// metadata document, a 401 without the challenge.
	Issuer string
	// ResourceName is the name the metadata document gives the route.
	ResourceName string
}

// The paths of the MCP endpoint and of its protected-resource metadata:
// at the root (as MCP clients ask first for a server at a root) and
// after the resource's path (RFC 9728 section 3.1).
const (
	mcpPath              = "/mcp"
	resourceMetadataPath = "/.well-known/oauth-protected-resource"
)

// mcpSessionHeader names a session of the streamable HTTP transport.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpServerVersion is what the MCP handshake says of the route's server.
const mcpServerVersion = "v1alpha1"

// mcpHandlers are the route's MCP endpoint and, for a JWT route, its
// protected-resource metadata document, by pattern.
func (s *Server) mcpHandlers() map[string]http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "ragroute", Title: "ragroute knowledge route", Version: mcpServerVersion},
		&mcp.ServerOptions{
			Instructions: "Answers come from this route's documentation only, filtered to what the caller may read. " +
				"Use search_knowledge for the fragments themselves, ask for a written answer with citations.",
			Logger: s.opts.Logger,
			// No logging capability: the route's logs are its own. The
			// tools are fixed when the route starts, so no listChanged: a
			// subscriptions/listen then agrees to nothing and ends at once
			// (the SDK holds one open only for a list that may change), and
			// clients do not open one.
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	s.addMCPTools(server)
	server.AddReceivingMiddleware(endWithTheStream)
	transport := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		Logger:              s.opts.Logger,
		MaxRequestBodyBytes: s.opts.Limits.BodyBytes,
		// A client that goes away cancels its call (and its turn).
		PropagateRequestCancellation: true,
		// The SDK would refuse a request that arrives on loopback with
		// another Host: a sign-in proxy in the route's pod sends exactly
		// that. The protection is for servers on a user's machine that
		// trust loopback (DNS rebinding); the route trusts no address and
		// authenticates every request.
		DisableLocalhostProtection: true,
	})
	endpoint := s.endpoint(func(w http.ResponseWriter, r *http.Request) error { return s.serveMCP(w, r, transport) })
	handlers := map[string]http.Handler{mcpPath: endpoint}
	if s.opts.MCP.Issuer != "" {
		metadata := http.HandlerFunc(s.resourceMetadata)
		handlers["GET "+resourceMetadataPath] = metadata
		handlers["GET "+resourceMetadataPath+mcpPath] = metadata
	}
	return handlers
}

// serveMCP authenticates r, refuses a session it never issued, and hands
// r to the transport with its caller in its context.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, transport http.Handler) error {
	id, err := s.authenticate(r)
	if err != nil {
		var refused *apiError
		if errors.As(err, &refused) && s.opts.MCP.Issuer != "" {
			refused.Header = http.Header{"WWW-Authenticate": {`Bearer resource_metadata="` + resourceURL(r, resourceMetadataPath+mcpPath) + `"`}}
		}
		return err
	}
	if r.Header.Get(mcpSessionHeader) != "" {
		// As an unknown session is answered (404), so a client starts
		// afresh, whoever's the id was: nothing tells whether it exists.
		return &apiError{Status: http.StatusNotFound, Code: "mcp_session_not_found", Param: mcpSessionHeader,
			Message: "no such MCP session: this route keeps none; send requests without Mcp-Session-Id"}
	}
	timeout := s.opts.Limits.BodyReadTimeout
	if timeout <= 0 {
		timeout = DefaultLimits().BodyReadTimeout
	}
	// As decode does: a body that trickles cannot hold the handler.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	if err := refuseBatch(w, r, s.opts.Limits.BodyBytes); err != nil {
		return err
	}
	// Every response of the transport is an event stream that lasts as
	// long as its call: it holds one of the caller's streams.
	stream, closeStream, err := s.openStream(r.Context(), id.User)
	if err != nil {
		return err
	}
	defer closeStream()
	ctx := context.WithValue(r.Context(), mcpCallerKey{}, mcpCaller{identity: id, requestID: requestID(w), stream: stream})
	transport.ServeHTTP(w, r.WithContext(ctx))
	return nil
}

// mcpCaller is who sent an MCP request, the request's id, which a turn it
// starts takes as its turn id, and the context of the request's stream
// (openStream), which its calls run under (endWithTheStream).
type mcpCaller struct {
	identity  identity.Identity
	requestID string
	stream    context.Context
}

// endWithTheStream runs each call under its request's stream, so that it
// ends when the client leaves or the drain ends: the SDK hides the HTTP
// request's end from its handlers (but for a cancel notification, or the
// 2026-07-28 protocol) and waits for them before it ends the response. The
// call then answers as a cancelled call does, and the response ends.
func endWithTheStream(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if caller, ok := callerOf(ctx); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(caller.stream, cancel)()
		}
		return next(ctx, method, req)
	}
}

type mcpCallerKey struct{}

// callerOf is the caller serveMCP put in ctx; ok is false only when a
// tool runs without serveMCP, which the route never does.
func callerOf(ctx context.Context) (mcpCaller, bool) {
	c, ok := ctx.Value(mcpCallerKey{}).(mcpCaller)
	return c, ok
}

// resourceMetadata serves the OAuth protected-resource metadata (RFC
// 9728) the MCP authorization specification asks of a server: the route's
// /mcp is the resource, the route's JWT issuer its authorization server.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, oauthex.ProtectedResourceMetadata{
		Resource:               resourceURL(r, mcpPath),
		AuthorizationServers:   []string{s.opts.MCP.Issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           s.opts.MCP.ResourceName,
	})
}

// resourceURL is path on the origin the client reached: the route does
// not know the name it is published under, the request does. A TLS
// terminating proxy says https in X-Forwarded-Proto.
func resourceURL(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}
