package main

import (
	"bytes"
	"cmp"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestDBPasswordFile: --db-password-file (or EDGEBENCH_DB_PASSWORD_FILE)
// gives the PostgreSQL password, so that the command line holds none; a
// password typed in --db is taken with a warning; mistakes are one line
// and exit status 2.
func TestDBPasswordFile(t *testing.T) {
	pwFile := testenv.TempFile(t, "db.pw", "s3cret:with@odd/chars\n")
	env := func(vars map[string]string) *cli.Env {
		var errb bytes.Buffer
		return &cli.Env{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(k string) string { return cmp.Or(vars[k], noEnv(k)) }}
	}
	for _, tc := range []struct {
		args []string
		vars map[string]string
	}{
		{[]string{"--db", "postgres://edgebench@db.lan/edgebench?sslmode=disable", "--db-password-file", pwFile}, nil},
		{[]string{"--db-password-file", pwFile, "--db", "postgres://edgebench@db.lan/edgebench?sslmode=disable"}, nil},
		{nil, map[string]string{"EDGEBENCH_DB": "postgres://edgebench@db.lan/edgebench?sslmode=disable", "EDGEBENCH_DB_PASSWORD_FILE": pwFile}},
	} {
		e := env(tc.vars)
		c, err := parseServe(append(tc.args, "--broker", "tcp://127.0.0.1:1883"), e)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		cfg, err := pgx.ParseConfig(c.db)
		if err != nil || cfg.Password != "s3cret:with@odd/chars" || cfg.User != "edgebench" || cfg.Host != "db.lan" || cfg.Database != "edgebench" {
			t.Errorf("%q: %+v, %v", tc.args, cfg, err)
		}
		if s := e.Stderr.(*bytes.Buffer).String(); s != "" {
			t.Errorf("%q: warned %q", tc.args, s)
		}
	}
	// Typed in the URL: taken, with a warning; from EDGEBENCH_DB: no warning.
	e := env(nil)
	if c, err := parseServe([]string{"--db", "postgres://edgebench:pw@db.lan/edgebench", "--broker", "tcp://127.0.0.1:1883"}, e); err != nil || c.db != "postgres://edgebench:pw@db.lan/edgebench" {
		t.Errorf("a password in --db: %v", err)
	}
	if s := e.Stderr.(*bytes.Buffer).String(); !strings.Contains(s, "--db carries a password, which any user of this machine can read in ps") {
		t.Errorf("no warning: %q", s)
	}
	e = env(map[string]string{"EDGEBENCH_DB": "postgres://edgebench:pw@db.lan/edgebench"})
	if _, err := parseServe([]string{"--broker", "tcp://127.0.0.1:1883"}, e); err != nil || e.Stderr.(*bytes.Buffer).Len() != 0 {
		t.Errorf("a password in EDGEBENCH_DB: %v, %q", err, e.Stderr.(*bytes.Buffer))
	}

	missing := filepath.Join(t.TempDir(), "none")
	empty := testenv.TempFile(t, "empty", "\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "--db", "x.db", "--db-password-file", pwFile}, `edgebench-collector runs: --db-password-file is for a postgres:// --db, not "x.db"`},
		{[]string{"runs", "--db", "postgres://u:pw@db.lan/x", "--db-password-file", pwFile}, "edgebench-collector runs: --db carries a password and --db-password-file gives one: keep the file"},
		{[]string{"runs", "--db", "postgres://u@db.lan/x?password=pw", "--db-password-file", pwFile}, "edgebench-collector runs: --db carries a password and --db-password-file gives one: keep the file"},
		{[]string{"serve", "--broker", "tcp://127.0.0.1:1883", "--db", "postgres://u@db.lan/x", "--db-password-file", missing},
			"edgebench-collector serve: --db-password-file: open " + missing + ": no such file or directory"},
		{[]string{"devices", "--db", "postgres://u@db.lan/x", "--db-password-file", empty},
			"edgebench-collector devices: --db-password-file " + empty + ": want the password on one line"},
	} {
		var out, errb bytes.Buffer
		code := program().Run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, tc.args)
		if code != 2 || errb.String() != tc.want+"\n" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
