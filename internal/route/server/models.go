package server

import (
	"fmt"
	"net/http"
)

// models lists the route's model (GET /v1/models), or answers it by name
// (GET /v1/models/{id}): the one a client names in requests.
func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.authenticate(r); err != nil {
		return err
	}
	entry := map[string]any{"id": s.modelID(), "object": "model", "created": s.started.Unix(), "owned_by": "ragroute"}
	if id := r.PathValue("id"); id != "" {
		if id != s.modelID() {
			return &apiError{Status: http.StatusNotFound, Code: "model_not_found", Param: "model",
				Message: fmt.Sprintf("no model %q here; this route serves %q", id, s.modelID())}
		}
		writeJSON(w, http.StatusOK, entry)
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{entry}})
	return nil
}

// modelID is the model name clients use for this route.
func (s *Server) modelID() string {
	if s.opts.ModelID != "" {
		return s.opts.ModelID
	}
	return "ragroute"
}
