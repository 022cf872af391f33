package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"time"
)

// bodyFormat is how an endpoint reads its JSON body.
type bodyFormat struct {
	// lenient ignores unknown fields instead of refusing them: OpenAI
	// clients send many a route does not read.
	lenient bool
	// notJSON opens the 400 answer to a body that does not decode.
	notJSON string
}

// strictBody is how the route's own endpoints read a body: unknown
// fields are refused.
func strictBody() bodyFormat {
	return bodyFormat{notJSON: "the body is not valid JSON for this endpoint: "}
}

// decode reads a JSON body of at most BodyBytes into into; it must arrive
// within BodyReadTimeout. A body refused is a 415, 413, 408 or 400
// *apiError.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, into any, format bodyFormat) error {
	if err := checkJSONContentType(r.Header); err != nil {
		return err
	}
	limits := s.opts.Limits
	timeout := limits.BodyReadTimeout
	if timeout <= 0 {
		timeout = DefaultLimits().BodyReadTimeout
	}
	// net/http lifts the deadline once the body has ended (to watch for
	// the client going away), so it never cuts the answer.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	r.Body = http.MaxBytesReader(w, r.Body, limits.BodyBytes)
	dec := json.NewDecoder(r.Body)
	if !format.lenient {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(into)
	if err == nil {
		// What follows the value is read under the deadline too, to the
		// body's end.
		_, err = io.Copy(io.Discard, r.Body)
	}
	if err == nil {
		return nil
	}
	// The deadline stays: the server reads what is left of a refused body
	// before answering, and the deadline bounds that too.
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("the body is over %d bytes", limits.BodyBytes)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &apiError{Status: http.StatusRequestTimeout, Code: "body_timeout", Message: fmt.Sprintf("the body did not arrive within %s", timeout),
			Header: http.Header{"Connection": {"close"}}} // the rest of the body is still on its way
	default:
		return &apiError{Status: http.StatusBadRequest, Code: "bad_json", Message: format.notJSON + err.Error()}
	}
}

// checkJSONContentType refuses a body not declared application/json
// (parameters such as charset allowed) with 415. A browser may send a
// text/plain or form POST to any origin without asking first; requiring
// application/json makes it send a CORS preflight, which the route answers
// only for its allowed origins.
func checkJSONContentType(header http.Header) error {
	declared := header.Get("Content-Type")
	if mediaType, _, err := mime.ParseMediaType(declared); err == nil && mediaType == "application/json" {
		return nil
	}
	return &apiError{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
		Message: fmt.Sprintf("the Content-Type header must be application/json, not %q", declared)}
}

// writeJSON answers v as JSON with status, every JSON answer of the API:
// answers, fragments and errors are one user's, so no cache (a browser's,
// a proxy's) may keep them.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
