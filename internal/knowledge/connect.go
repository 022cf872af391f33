package knowledge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Connection says how to reach one Milvus database.
type Connection struct {
	// URI is http://host:port, https://host[:port] or tcp://host:port
	// (DialAddress).
	URI      string
	Database string
	// Token is "user:password" or an API key; empty for no auth.
	Token                 string
	TLSServerName         string
	TLSInsecureSkipVerify bool
}

// ServerInfo is what a successful probe learned.
type ServerInfo struct {
	Version string
}

// Connect opens a client. ctx bounds the dial: Milvus' client blocks until
// the server answers, so an unreachable server costs the caller's deadline,
// not forever.
func Connect(ctx context.Context, conn Connection) (*milvusclient.Client, error) {
	if conn.URI == "" {
		return nil, errors.New("milvus uri is empty")
	}
	address, err := clientAddress(conn.URI)
	if err != nil {
		return nil, fmt.Errorf("milvus uri: %w", err)
	}
	// The client dials until ctx ends; without WithReturnConnectionError
	// its error says only that the deadline passed, not why (refused, no
	// such host, TLS), and the logs need the why. The Milvus client dials
	// with grpc.DialContext, which supports the option throughout gRPC 1.x.
	dialOptions := append(slices.Clone(milvusclient.DefaultGrpcOpts), grpc.WithReturnConnectionError()) //nolint:staticcheck // see above
	if strings.HasPrefix(address, "https://") && (conn.TLSServerName != "" || conn.TLSInsecureSkipVerify) {
		tlsConfig := &tls.Config{
			ServerName:         conn.TLSServerName,
			InsecureSkipVerify: conn.TLSInsecureSkipVerify, //nolint:gosec // opt-in, documented as test-only
			MinVersion:         tls.VersionTLS12,
		}
		dialOptions = append(dialOptions, grpc.WithTransportCredentials(credentials.NewTLS(tlsConfig)))
	}
	cfg := &milvusclient.ClientConfig{
		Address:     address,
		DBName:      conn.Database,
		APIKey:      conn.Token,
		DialOptions: dialOptions,
	}
	client, err := milvusclient.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to milvus at %s: %w", conn.URI, err)
	}
	return client, nil
}

// Probe connects, asks the server's version and checks that the database
// exists, so a typo in the database name is reported as such
// (NoDatabaseError). ClassifyError says what kind of failure an error is.
func Probe(ctx context.Context, conn Connection) (ServerInfo, error) {
	client, err := Connect(ctx, conn)
	if err != nil {
		return ServerInfo{}, err
	}
	defer func() { _ = client.Close(context.WithoutCancel(ctx)) }()

	version, err := client.GetServerVersion(ctx, milvusclient.NewGetServerVersionOption())
	if err != nil {
		return ServerInfo{}, fmt.Errorf("milvus at %s: get server version: %w", conn.URI, err)
	}
	if conn.Database != "" {
		databases, err := client.ListDatabase(ctx, milvusclient.NewListDatabaseOption())
		if err != nil {
			return ServerInfo{}, fmt.Errorf("milvus at %s: list databases: %w", conn.URI, err)
		}
		if !slices.Contains(databases, conn.Database) {
			return ServerInfo{}, &NoDatabaseError{URI: conn.URI, Database: conn.Database, Have: databases}
		}
	}
	return ServerInfo{Version: version}, nil
}
