// Package identity establishes who asks a route: an Authenticator reads a
// request's Identity from trusted proxy headers (ProxyHeaders) or a JWT
// bearer token verified against the issuer's JWKS (JWTVerifier), and an
// Identity's Principals are what the ACL filter matches.
//
// Every user and group name is checked with the rule of package principal
// (valid UTF-8, non-empty, bounded, no whitespace, control or format
// character, no U+FFFD, no comma) and used exactly as sent: nothing is
// trimmed or mended into another name, except ASCII spaces and tabs
// around the items of a comma-separated groups list. A request whose
// identity headers are missing, repeated or break the rule, or whose token
// does not verify or carries such a name, fails with an error wrapping
// ErrNoIdentity that names the header or claim and what is wrong with it
// ("X-Forwarded-Groups: group 2 contains U+00A0 (no-break space)"); the
// route's API answers it with 401 and that message. It imports nothing
// else of ragroute but package principal.
package identity
