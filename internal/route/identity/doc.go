// Package identity establishes who asks a route: an Authenticator reads a
// request's Identity from trusted proxy headers (ProxyHeaders) or a JWT
// bearer token verified against the issuer's JWKS (JWTVerifier), and an
// Identity's Principals are what the ACL filter matches. No identity is
// ErrNoIdentity. It imports nothing else of ragroute.
package identity
