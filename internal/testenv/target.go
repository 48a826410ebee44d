package testenv

import (
	"testing"

	"github.com/edgebench/edgebench/target"
)

// Target starts edgebench's built-in target on a loopback port, serving
// the files of dir ("" for an empty folder of the test), stopped when the
// test ends, and returns its base URL, http://127.0.0.1:PORT.
func Target(t testing.TB, dir string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	files, err := target.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := target.Start("127.0.0.1:0", "edgebench/test", files)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "http://" + srv.Addr()
}
