package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// auditLog reads the API server's audit log, which the bed writes for the
// operator's user only: one event per completed create, update, patch or
// delete. Server-side apply is a patch; an apply that changes nothing is
// still a request, and is counted.
type auditLog struct{ path string }

// offset is where the next event will start.
func (a auditLog) offset() (int64, error) {
	st, err := os.Stat(a.path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// writes are the operator's API writes in one window, by kind of request.
type writes struct {
	Total int `json:"total"`
	// ByRequest counts e.g. "patch deployments", "patch queryroutes/status",
	// "create events".
	ByRequest map[string]int `json:"byRequest"`
	// Failed counts requests the API server refused (status >= 400).
	Failed int `json:"failed"`
}

func (w writes) String() string {
	keys := make([]string, 0, len(w.ByRequest))
	for k := range w.ByRequest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, w.ByRequest[k])
	}
	return strings.Join(parts, ", ")
}

// count reads the events between two offsets (to = -1: to the end).
func (a auditLog) count(from, to int64) (writes, error) {
	out := writes{ByRequest: map[string]int{}}
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return out, err
	}
	var r io.Reader = f
	if to >= 0 {
		r = io.LimitReader(f, to-from)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string                    `json:"verb"`
			User      struct{ Username string } `json:"user"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return out, fmt.Errorf("audit log %s: %w", a.path, err)
		}
		if ev.User.Username != operatorUser {
			continue
		}
		resource := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			resource += "/" + ev.ObjectRef.Subresource
		}
		out.Total++
		out.ByRequest[ev.Verb+" "+resource]++
		if ev.ResponseStatus.Code >= 400 {
			out.Failed++
		}
	}
	return out, sc.Err()
}
