// Package routetest is test support for the route packages: a route (the
// turn and its search body) over a real Milvus Lite and the scripted model
// server of internal/testenv (World; an Option changes its config or the
// assembly's parts before it is built, Replica builds it again for a
// second replica), the shared Milvus Lite and Redis of
// a test binary (Main stops them), and helpers to script the model and
// read a turn's events. Only tests import it. NewWorld skips under -short:
// the tests that use it are integration tests.
package routetest
