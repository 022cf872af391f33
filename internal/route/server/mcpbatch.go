package server

import (
	"bufio"
	"io"
	"net/http"
)

// /mcp refuses JSON-RPC batches, whatever the protocol version. Only the
// oldest the SDK speaks (2025-03-26, also what a request without
// MCP-Protocol-Version is taken for) allowed them, and the official
// clients send none; but every call of one request would share the
// request's id, which an ask takes as its turn id (so the feedback store
// and the logs would merge their turns), and one request could start any
// number of calls. One message per request keeps each turn id its own.

// refuseBatch answers 400 mcp_batch_refused when r's body is a JSON-RPC
// batch (its first byte past white space is '['). Otherwise it leaves the
// body to the transport as it was, less that white space, reading at most
// bodyBytes (an oversized or failing body is the transport's to answer).
func refuseBatch(w http.ResponseWriter, r *http.Request, bodyBytes int64) error {
	if r.Body == nil {
		return nil
	}
	body := bufio.NewReader(http.MaxBytesReader(w, r.Body, bodyBytes))
	r.Body = readCloser{Reader: body, Closer: r.Body}
	for {
		b, err := body.ReadByte()
		if err != nil {
			return nil
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return &apiError{Status: http.StatusBadRequest, Code: "mcp_batch_refused",
				Message: "JSON-RPC batches are not served: send one message per request (MCP has had no batches since 2025-06-18)"}
		}
		_ = body.UnreadByte()
		return nil
	}
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
