// Package adversarial is the route's adversarial ACL harness: it ingests a
// corpus whose ACLs name crafted principals (quotes, backslashes, Milvus
// expression operators, case variants, prefixes and suffixes of other
// names, NFC and NFD forms, user: and group: of one name, public) and
// documents read from files as an ingestion run reads them (a heading
// over the schema's limit; a public source whose path is a link to
// another source's mount, which must be refused), then
// sends many requests to every endpoint of a real route (Milvus Lite, a
// scripted model that echoes what it retrieved, a memory and a Redis exact
// cache) under identities built from those names and from tricks on the
// identity headers (duplicated headers, no-break spaces, empty items,
// forged items). Every row's text holds a unique marker; a marker in a
// response whose ACL holds none of the caller's principals, computed here
// from the headers alone, is a leak, and the test fails on the first one.
//
// go test ./test/adversarial -run TestACLAdversarial -v -args -adversarial.requests=10000
// (make adversarial) runs it at scale; go test ./... runs 1000 requests.
package adversarial
