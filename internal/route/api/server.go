package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turnlog"
)

// Limits bound what one request may ask, and how much one user and the
// replica may run. A turn limit left at zero takes its default.
type Limits struct {
	BodyBytes    int64
	Messages     int
	MessageBytes int
	TurnTimeout  time.Duration
	KeepAlive    time.Duration
	// BodyReadTimeout bounds reading a request body, so a client that
	// trickles one cannot hold a handler.
	BodyReadTimeout time.Duration
	// ConcurrentTurnsPerUser bounds one user's turns (and searches)
	// running at once; more is 429.
	ConcurrentTurnsPerUser int
	// TurnsPerMinutePerUser is one user's sustained rate of turns (and
	// searches), with a burst of ConcurrentTurnsPerUser; more is 429.
	TurnsPerMinutePerUser int
	// MaxInFlightTurns bounds the turns (and searches) running at once on
	// this replica, all users together; more is 503.
	MaxInFlightTurns int
}

// readyCheckTimeout bounds the readiness checks.
const readyCheckTimeout = 1500 * time.Millisecond

// DefaultLimits suit a chat UI. The turn limits equal the QueryRoute's
// schema defaults (spec.limits).
func DefaultLimits() Limits {
	return Limits{BodyBytes: 1 << 20, Messages: 64, MessageBytes: 32 << 10, TurnTimeout: 5 * time.Minute, KeepAlive: 15 * time.Second,
		BodyReadTimeout: 30 * time.Second, ConcurrentTurnsPerUser: 4, TurnsPerMinutePerUser: 30, MaxInFlightTurns: 256}
}

// Server is the route's HTTP API.
type Server struct {
	Runner   *route.Runner
	Searcher *retrieval.Searcher
	Log      turnlog.Log
	Auth     identity.Authenticator
	Limits   Limits
	// Ready checks what this replica needs to serve (the Milvus collection
	// alias served); a failure names its dependency with *NotReadyError,
	// and /readyz answers only the names.
	Ready func(ctx context.Context) error
	// ModelHealth checks the chat model's server for the ragroute_model_up
	// gauge, every ModelCheckEvery (default 15 s). It is not readiness: the
	// model is shared, so a blip would take every replica out at once.
	ModelHealth     func(ctx context.Context) error
	ModelCheckEvery time.Duration
	// UpstreamRetries reads each upstream's count of retried calls (429,
	// 503, refused) by name (chat, embedder, reranker), exported as
	// ragroute_upstream_retries_total.
	UpstreamRetries map[string]func() int64
	// ModelID is the model name /v1/models lists (the route's name).
	ModelID string
	// Page, when set, serves the route's web page at GET / (and its
	// assets); nil: no page.
	Page http.Handler
	// CORSAllowedOrigins are the browser origins answered with CORS
	// headers (cors.go); none: no CORS.
	CORSAllowedOrigins []string
	// Tracing, when set, traces each request and the turn it starts
	// (W3C trace context taken from the caller); nil: no tracing.
	Tracing trace.TracerProvider
	Logger  *slog.Logger

	metrics   *metrics
	admission *admission
	// turns is cancelled on shutdown so running turns end with an error
	// event instead of hanging.
	turns   context.Context
	started time.Time
}

// Handler returns the API's routes. ctx bounds the turns it starts.
func (s *Server) Handler(ctx context.Context) http.Handler {
	s.admission = newAdmission(s.Limits, time.Now)
	var cache any
	if s.Searcher != nil {
		cache = s.Searcher.Cache
	}
	s.metrics = newMetrics(s.admission.running, s.UpstreamRetries, cache, s.Log)
	s.turns, s.started = ctx, time.Now()
	mux := http.NewServeMux()
	for pattern, handler := range map[string]http.HandlerFunc{
		"POST /v1/turns":            s.submit,
		"GET /v1/turns/{id}/events": s.events,
		"POST /v1/search":           s.search,
		"POST /v1/chat/completions": s.completions,
		"GET /v1/models":            s.models,
		"GET /v1/models/{id}":       s.models,
		"GET /healthz":              func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") },
		"GET /readyz":               s.ready,
	} {
		_, path, _ := strings.Cut(pattern, " ")
		mux.Handle(pattern, s.metrics.instrument(path, handler))
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	if s.Page != nil {
		mux.Handle("GET /{$}", s.metrics.instrument("/", s.Page))
		mux.Handle("GET /ui/", s.metrics.instrument("/ui/", s.Page))
	}
	if s.ModelHealth != nil {
		go s.watchModel(ctx)
	}
	var handler http.Handler = mux
	if s.Tracing != nil {
		handler = otelhttp.NewHandler(mux, "ragroute", otelhttp.WithTracerProvider(s.Tracing),
			otelhttp.WithPropagators(propagation.TraceContext{}),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method }),
			otelhttp.WithFilter(func(r *http.Request) bool {
				return r.URL.Path != "/metrics" && r.URL.Path != "/healthz" && r.URL.Path != "/readyz"
			}))
	}
	return withRequestID(withCORS(s.CORSAllowedOrigins, handler))
}

// apiError writes OpenAI's error shape, {"error": {"message", "type",
// "param", "code"}}, on every endpoint.
func apiError(w http.ResponseWriter, status int, code, message string) {
	apiErrorParam(w, status, code, "", message)
}

// apiErrorParam is apiError naming the request field at fault.
func apiErrorParam(w http.ResponseWriter, status int, code, param, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": errorBody(status, code, param, message)})
}

// errorBody is the inside of OpenAI's error object; param is null when
// no field is at fault.
func errorBody(status int, code, param, message string) map[string]any {
	var p any
	if param != "" {
		p = param
	}
	return map[string]any{"message": message, "type": errorType(status), "param": p, "code": code}
}

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (identity.Identity, bool) {
	id, err := s.Auth.Authenticate(r)
	if err != nil {
		apiError(w, http.StatusUnauthorized, "unauthenticated", "a verified identity is required: "+err.Error())
		return identity.Identity{}, false
	}
	return id, true
}

type turnRequest struct {
	Messages       []model.Message `json:"messages"`
	ConversationID string          `json:"conversation_id,omitempty"`
}

// decode reads a bounded JSON body, refusing unknown fields, answering
// 413/408/400 itself.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, into any) bool {
	return s.decodeBody(w, r, into, true, "the body is not valid JSON for this endpoint: ")
}

// decodeBody reads a JSON body of at most BodyBytes that must arrive
// within BodyReadTimeout, answering 413/408/400 itself; badJSON prefixes
// the decoder's error.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, into any, strict bool, badJSON string) bool {
	timeout := s.Limits.BodyReadTimeout
	if timeout <= 0 {
		timeout = DefaultLimits().BodyReadTimeout
	}
	// net/http lifts the deadline once the body has ended (to watch for
	// the client going away), so it never cuts the answer.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	r.Body = http.MaxBytesReader(w, r.Body, s.Limits.BodyBytes)
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(into)
	if err == nil {
		// What follows the value is read under the deadline too, to the
		// body's end.
		_, err = io.Copy(io.Discard, r.Body)
	}
	if err != nil {
		// The deadline stays: the server reads what is left of a refused
		// body before answering, and the deadline bounds that too.
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			apiError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is over %d bytes", s.Limits.BodyBytes))
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close") // the rest of the body is still on its way
			apiError(w, http.StatusRequestTimeout, "body_timeout", fmt.Sprintf("the body did not arrive within %s", timeout))
		default:
			apiError(w, http.StatusBadRequest, "bad_json", badJSON+err.Error())
		}
		return false
	}
	return true
}

// checkMessages: only user and assistant messages (a client cannot inject
// a system prompt), the last from the user, within the limits.
func (s *Server) checkMessages(messages []model.Message) error {
	if len(messages) == 0 {
		return errors.New("messages is empty")
	}
	if len(messages) > s.Limits.Messages {
		return fmt.Errorf("%d messages; the limit is %d", len(messages), s.Limits.Messages)
	}
	for i, m := range messages {
		if m.Role != model.RoleUser && m.Role != model.RoleAssistant {
			return fmt.Errorf("messages[%d].role %q: want user or assistant", i, m.Role)
		}
		if len(m.Content) > s.Limits.MessageBytes || !utf8.ValidString(m.Content) {
			return fmt.Errorf("messages[%d] is over %d bytes or not UTF-8", i, s.Limits.MessageBytes)
		}
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return fmt.Errorf("messages[%d] carries tool calls; clients send text only", i)
		}
	}
	if last := messages[len(messages)-1]; last.Role != model.RoleUser || strings.TrimSpace(last.Content) == "" {
		return errors.New("the last message must be the user's question")
	}
	return nil
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	var req turnRequest
	if !s.decode(w, r, &req) {
		return
	}
	if err := s.checkMessages(req.Messages); err != nil {
		apiError(w, http.StatusBadRequest, "bad_messages", err.Error())
		return
	}
	release, refused := s.admission.admit(id.User)
	if refused != nil {
		s.refuse(w, refused)
		return
	}
	turnID := requestID(w)
	if err := s.Log.Start(r.Context(), turnID, id.User); err != nil {
		release()
		if errors.Is(err, turnlog.ErrTooManyTurns) {
			w.Header().Set("Retry-After", retryAfterSeconds(retrySoon))
			apiError(w, http.StatusServiceUnavailable, "turn_not_started", err.Error())
			return
		}
		s.turnLogUnavailable(w, turnID, err)
		return
	}
	input := route.TurnInput{ID: turnID, Messages: req.Messages, Principals: id.Principals()}
	// The turn outlives the request; its spans join the request's trace.
	go s.play(input, release, s.observeTurn(turnID, id.User, "turns"), trace.SpanFromContext(r.Context()))

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]string{"turn_id": turnID, "stream_url": "/v1/turns/" + turnID + "/events"})
}

// play runs a turn in the background, writing its events to the log.
// The turn holds its admission slot until its last event, and gives it
// back before writing that event: a client that submits again as soon as
// it reads it is not refused by its own finished turn. A turn whose log
// fails is cancelled: no client could read the rest of it.
func (s *Server) play(in route.TurnInput, release func(), observer *turnObserver, parent trace.Span) {
	defer release()
	ctx, cancel := context.WithTimeout(trace.ContextWithSpan(s.turns, parent), s.Limits.TurnTimeout)
	defer cancel()
	logFailed := false
	s.Runner.Run(ctx, in, func(ev route.Event) {
		observer.event(ev)
		if ev.Final() {
			release()
		}
		if logFailed && !ev.Final() {
			return
		}
		// The log's context is not the turn's: a cancelled turn still
		// records its error event, also after the log failed once (it may
		// be back), so a reader's stream ends.
		if err := s.appendEvent(ctx, in.ID, ev); err != nil && !logFailed {
			logFailed = true
			cancel()
			s.logError("append turn event; the turn is cancelled", in.ID, err)
		}
	})
}

func newTurnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// events streams a turn's events as Server-Sent Events, resuming after
// Last-Event-ID.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	turnID := r.PathValue("id")
	owner, err := s.Log.Owner(r.Context(), turnID)
	if err != nil && !errors.Is(err, turnlog.ErrTurnNotFound) {
		s.turnLogUnavailable(w, turnID, err)
		return
	}
	if err != nil || owner != id.User {
		// Another user's turn does not exist, as far as this user knows.
		apiError(w, http.StatusNotFound, "turn_not_found", "no turn "+turnID)
		return
	}
	after := int64(0)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if after, err = strconv.ParseInt(last, 10, 64); err != nil || after < 0 {
			apiError(w, http.StatusBadRequest, "bad_last_event_id", "Last-Event-ID must be an event id")
			return
		}
	}
	flusher, ok := startSSE(w)
	if !ok {
		return
	}
	for {
		events, done, err := s.Log.Read(r.Context(), turnID, after, s.Limits.KeepAlive)
		if err != nil {
			if r.Context().Err() == nil && !errors.Is(err, turnlog.ErrTurnNotFound) {
				s.streamTurnLogUnavailable(w, flusher, turnID, err)
			}
			return // client gone, the turn freed, or the log down
		}
		if len(events) == 0 && !done {
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		}
		for _, ev := range events {
			data, _ := json.Marshal(ev.Data)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data)
			after = ev.ID
		}
		flusher.Flush()
		if done {
			return
		}
	}
}

// startSSE sends the headers of a Server-Sent Events stream; it answers
// 500 itself when the connection cannot stream.
func startSSE(w http.ResponseWriter) (http.Flusher, bool) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "no_streaming", "streaming unsupported")
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	return flusher, true
}

type searchRequest struct {
	Query string `json:"query"`
}

// search returns the fused, ACL-filtered fragments for a query.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	var req searchRequest
	if !s.decode(w, r, &req) {
		return
	}
	if q := strings.TrimSpace(req.Query); q == "" || len(q) > s.Limits.MessageBytes {
		apiError(w, http.StatusBadRequest, "bad_query", fmt.Sprintf("query must be 1 to %d bytes", s.Limits.MessageBytes))
		return
	}
	release, refused := s.admission.admit(id.User)
	if refused != nil {
		s.refuse(w, refused)
		return
	}
	defer release()
	res, err := s.Searcher.Search(r.Context(), req.Query, id.Principals())
	release() // before the answer, which a client may follow with its next request
	if err != nil {
		// The error names internal addresses: the log gets it, the client a code.
		if s.Logger != nil {
			s.Logger.Error("search failed", "error", err)
		}
		apiError(w, http.StatusBadGateway, route.CodeKnowledgeUnavailable, "The knowledge search is unavailable; try again later.")
		return
	}
	type fragment struct {
		retrieval.Fragment
		Text string `json:"text"`
	}
	out := struct {
		Query      string                `json:"query"`
		Intent     retrieval.Intent      `json:"intent"`
		CacheHit   bool                  `json:"cache_hit"`
		Confidence *retrieval.Confidence `json:"confidence,omitempty"`
		Fragments  []fragment            `json:"fragments"`
	}{Query: req.Query, Intent: res.Intent, CacheHit: res.CacheHit, Fragments: []fragment{}}
	if !res.CacheHit {
		out.Confidence = &res.Confidence
	}
	for _, f := range res.Fragments {
		out.Fragments = append(out.Fragments, fragment{Fragment: f, Text: f.Text})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// ready answers {"ready":true}, or 503 {"ready":false,"notReady":[…]}
// naming the dependencies. The probe is unauthenticated, so the errors
// (addresses, internal URLs) go to the log only.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	// Within the probe's own 2 s timeout (the Deployment's readiness probe),
	// so a hung Milvus is reported as such and logged, not as a probe timeout.
	ctx, cancel := context.WithTimeout(r.Context(), readyCheckTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	err := s.Ready(ctx)
	if err == nil {
		_ = json.NewEncoder(w).Encode(readiness{Ready: true})
		return
	}
	notReady := notReadyDependencies(err)
	if s.Logger != nil {
		s.Logger.Warn("route not ready", "notReady", notReady, "error", err)
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(readiness{NotReady: notReady})
}
