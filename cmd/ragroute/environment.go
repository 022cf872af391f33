package main

// environment looks up the process' environment variables: os.Getenv in
// the binary, a map in tests. cmd/ is the one place that reads them.
type environment func(name string) string
