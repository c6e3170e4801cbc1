package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/config"
)

// Defaults of config.Executor.
const (
	DefaultAddress   = "127.0.0.1:7233"
	DefaultNamespace = "default"
	DefaultQueue     = "sot"
)

// Settings are the executor settings with their defaults filled in.
func Settings(e config.Executor) config.Executor {
	if e.Address == "" {
		e.Address = DefaultAddress
	}
	if e.Namespace == "" {
		e.Namespace = DefaultNamespace
	}
	if e.TaskQueue == "" {
		e.TaskQueue = DefaultQueue
	}
	return e
}

// Dial connects to the Temporal service e names. The API key, when e names
// its variable, is read with getenv; it implies TLS.
func Dial(e config.Executor, getenv func(string) string, logger *slog.Logger) (client.Client, error) {
	e = Settings(e)
	opts := client.Options{HostPort: e.Address, Namespace: e.Namespace, Logger: sdklog.NewStructuredLogger(logger)}
	useTLS := e.TLS.Enabled || e.TLS.Cert != "" || e.TLS.CA != ""
	if e.APIKeyEnv != "" {
		key := getenv(e.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("executor.api_key_env names %s, which is not set: set it to your Temporal API key", e.APIKeyEnv)
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
		useTLS = true
	}
	if useTLS {
		tc := &tls.Config{ServerName: e.TLS.ServerName, MinVersion: tls.VersionTLS12}
		if e.TLS.Cert != "" || e.TLS.Key != "" {
			cert, err := tls.LoadX509KeyPair(e.TLS.Cert, e.TLS.Key)
			if err != nil {
				return nil, fmt.Errorf("executor.tls: the client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		if e.TLS.CA != "" {
			pem, err := os.ReadFile(e.TLS.CA)
			if err != nil {
				return nil, fmt.Errorf("executor.tls.ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("executor.tls.ca: %s holds no PEM certificate", e.TLS.CA)
			}
			tc.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = tc
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w; start a dev server with `temporal server start-dev`, or set executor.address", e.Address, e.Namespace, err)
	}
	return c, nil
}

// Blobs is a blob store a process opened, to close when it is done.
type Blobs interface {
	Store
	Close() error
}

// OpenBlobs opens the blob store e names: a directory (default: sot/blobs
// in the user cache directory, for workers on this machine) or an
// S3-compatible bucket, s3://BUCKET[/PREFIX][?endpoint=HOST:PORT&region=R&tls=false],
// whose keys getenv reads (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
func OpenBlobs(ctx context.Context, e config.Executor, getenv func(string) string) (Blobs, error) {
	dir := e.Blobs
	if strings.HasPrefix(dir, "s3://") {
		return blob.OpenS3(ctx, dir, getenv)
	}
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no user cache directory for the blob store (%w); set executor.blobs", err)
		}
		dir = filepath.Join(cache, "sot", "blobs")
	}
	return blob.OpenDir(dir)
}
