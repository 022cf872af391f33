package assembly

// Secrets looks up the secret values a route's config names by the
// environment variable that carries each (the pod's environment in
// production, a map in tests).
type Secrets func(name string) string

// Get is the value of the variable name, or nothing when the config
// names none.
func (s Secrets) Get(name string) string {
	if name == "" || s == nil {
		return ""
	}
	return s(name)
}
