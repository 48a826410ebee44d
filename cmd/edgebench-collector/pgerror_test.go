package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestPostgresDialErrorOnce: a PostgreSQL server that cannot be reached
// is one line, its dial error said once (pgx tries twice under
// sslmode=prefer, and listed both attempts, alike, on lines of their own).
func TestPostgresDialErrorOnce(t *testing.T) {
	addr := testenv.FreeAddr(t) // nothing listens there
	for _, cmd := range []string{"runs", "devices"} {
		var out, errb bytes.Buffer
		code := program().Run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv},
			[]string{cmd, "--db", "postgres://edgebench@" + addr + "/edgebench"})
		msg := errb.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || strings.Count(msg, "connection refused") != 1 || !strings.Contains(msg, "dial tcp "+addr) {
			t.Errorf("%s: exit %d, want 1 and one line with the dial error once:\n%s", cmd, code, msg)
		}
	}
}
